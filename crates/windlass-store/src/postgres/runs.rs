//! The live-run port on Postgres: `live_runs` and `response_events` (see
//! `migrations-pg/0002_live_runs.sql`). Every method is one statement.
//! Claims use `FOR UPDATE SKIP LOCKED`, so replicas sweeping at once each
//! take different rows and never wait on each other.

use tokio_postgres::Row;
use windlass_engine::{LiveRecord, LiveRun, RunStore, StoreError, StoredEvent, UnixMillis};
use windlass_protocol::ResponseResource;

use super::error::backend;
use super::PgStore;

fn millis(t: UnixMillis) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

/// A row of `tenant, body, replica, lease_until, resume`.
fn decode_live(row: &Row) -> Result<LiveRecord, StoreError> {
    let body: &str = row.try_get(1).map_err(backend)?;
    let response: ResponseResource =
        serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("live run: {e}")))?;
    let lease: i64 = row.try_get(3).map_err(backend)?;
    Ok(LiveRecord {
        tenant: row.try_get(0).map_err(backend)?,
        response,
        replica: row.try_get(2).map_err(backend)?,
        lease_until: u64::try_from(lease).unwrap_or(0),
        resume: row.try_get(4).map_err(backend)?,
    })
}

/// Inserts or replaces the live row, unless the response is already stored
/// or the id is live under another tenant (then nothing is written).
const PUT_LIVE: &str = "\
INSERT INTO live_runs (id, tenant, created_at, replica, lease_until, body, resume) \
SELECT $1, $2, $3, $4, $5, $6, $7 \
WHERE NOT EXISTS (SELECT 1 FROM responses WHERE id = $1) \
ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, \
    replica = EXCLUDED.replica, lease_until = EXCLUDED.lease_until, \
    body = EXCLUDED.body, resume = EXCLUDED.resume \
WHERE live_runs.tenant = EXCLUDED.tenant";

#[async_trait::async_trait]
impl RunStore for PgStore {
    async fn put_live(&self, run: LiveRun<'_>) -> Result<(), StoreError> {
        let body = serde_json::to_string(run.response)
            .map_err(|e| StoreError::Backend(format!("cannot encode live run: {e}")))?;
        let created_at = i64::try_from(run.response.created_at).unwrap_or(i64::MAX);
        let conn = self.conn().await?;
        let stmt = conn.prepare_cached(PUT_LIVE).await.map_err(backend)?;
        let written = conn
            .execute(
                &stmt,
                &[
                    &run.response.id,
                    &run.tenant,
                    &created_at,
                    &run.replica,
                    &millis(run.lease_until),
                    &body,
                    &run.resume,
                ],
            )
            .await
            .map_err(backend)?;
        match written {
            0 => Err(StoreError::Duplicate(run.response.id.clone())),
            _ => Ok(()),
        }
    }

    async fn get_live(&self, tenant: &str, id: &str) -> Result<Option<LiveRecord>, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "SELECT tenant, body, replica, lease_until, resume FROM live_runs \
                 WHERE id = $1 AND tenant = $2",
            )
            .await
            .map_err(backend)?;
        let row = conn
            .query_opt(&stmt, &[&id, &tenant])
            .await
            .map_err(backend)?;
        row.as_ref().map(decode_live).transpose()
    }

    async fn renew_leases(
        &self,
        replica: &str,
        lease_until: UnixMillis,
    ) -> Result<u64, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached("UPDATE live_runs SET lease_until = $1 WHERE replica = $2")
            .await
            .map_err(backend)?;
        conn.execute(&stmt, &[&millis(lease_until), &replica])
            .await
            .map_err(backend)
    }

    async fn claim_expired(
        &self,
        replica: &str,
        now: UnixMillis,
        lease_until: UnixMillis,
        limit: usize,
    ) -> Result<Vec<LiveRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "UPDATE live_runs SET replica = $1, lease_until = $2 \
                 WHERE id IN (SELECT id FROM live_runs WHERE lease_until < $3 \
                              ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) \
                 RETURNING tenant, body, replica, lease_until, resume",
            )
            .await
            .map_err(backend)?;
        let rows = conn
            .query(
                &stmt,
                &[&replica, &millis(lease_until), &millis(now), &limit],
            )
            .await
            .map_err(backend)?;
        let mut out = rows
            .iter()
            .map(decode_live)
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by(|a, b| {
            (a.response.created_at, &a.response.id).cmp(&(b.response.created_at, &b.response.id))
        });
        Ok(out)
    }

    async fn drop_live(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached("DELETE FROM live_runs WHERE id = $1 AND tenant = $2")
            .await
            .map_err(backend)?;
        let n = conn
            .execute(&stmt, &[&id, &tenant])
            .await
            .map_err(backend)?;
        Ok(n > 0)
    }

    async fn append_events(
        &self,
        tenant: &str,
        id: &str,
        events: &[StoredEvent],
    ) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let seqs: Vec<i64> = events
            .iter()
            .map(|e| i64::try_from(e.sequence_number).unwrap_or(i64::MAX))
            .collect();
        let bodies: Vec<&str> = events.iter().map(|e| e.json.as_str()).collect();
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "INSERT INTO response_events (response_id, sequence_number, tenant, body) \
                 SELECT $1, s, $2, b FROM unnest($3::bigint[], $4::text[]) AS t (s, b) \
                 ON CONFLICT DO NOTHING",
            )
            .await
            .map_err(backend)?;
        conn.execute(&stmt, &[&id, &tenant, &seqs, &bodies])
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn events_after(
        &self,
        tenant: &str,
        id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "SELECT sequence_number, body FROM response_events \
                 WHERE response_id = $1 AND tenant = $2 AND sequence_number > $3 \
                 ORDER BY sequence_number",
            )
            .await
            .map_err(backend)?;
        let rows = conn
            .query(&stmt, &[&id, &tenant, &after])
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                let seq: i64 = r.try_get(0).map_err(backend)?;
                Ok(StoredEvent {
                    sequence_number: u64::try_from(seq).unwrap_or(0),
                    json: r.try_get(1).map_err(backend)?,
                })
            })
            .collect()
    }
}

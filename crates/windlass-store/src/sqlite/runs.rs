//! The live-run port on SQLite: `live_runs` and `response_events` (see
//! `migrations/0005_live_runs.sql`). Writes go through the one writer like
//! every write; reads run inline on a reader.

use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use windlass_engine::{LiveRecord, LiveRun, RunStore, StoreError, StoredEvent, UnixMillis};
use windlass_protocol::ResponseResource;

use super::write::on_writer;
use super::SqliteStore;
use crate::codec::backend;

const LIVE_COLUMNS: &str = "tenant, body, replica, lease_until, resume";

fn live_row(row: &Row<'_>) -> rusqlite::Result<(String, String, String, i64, Option<String>)> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn decode_live(
    (tenant, body, replica, lease, resume): (String, String, String, i64, Option<String>),
) -> Result<LiveRecord, StoreError> {
    let response: ResponseResource =
        serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(format!("live run: {e}")))?;
    Ok(LiveRecord {
        tenant,
        response,
        replica,
        lease_until: u64::try_from(lease).unwrap_or(0),
        resume,
    })
}

fn millis(t: UnixMillis) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

fn put_live(conn: &mut Connection, row: &LiveRow) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let stored: bool = tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM responses WHERE id = ?)")
        .and_then(|mut s| s.query_row([&row.id], |r| r.get(0)))
        .map_err(backend)?;
    let foreign: bool = tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM live_runs WHERE id = ?1 AND tenant <> ?2)")
        .and_then(|mut s| s.query_row(params![row.id, row.tenant], |r| r.get(0)))
        .map_err(backend)?;
    if stored || foreign {
        return Err(StoreError::Duplicate(row.id.clone()));
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO live_runs \
         (id, tenant, created_at, replica, lease_until, body, resume) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            row.id,
            row.tenant,
            row.created_at,
            row.replica,
            row.lease_until,
            row.body,
            row.resume
        ])
    })
    .map_err(backend)?;
    tx.commit().map_err(backend)
}

/// A live row, owned, for the writer thread.
struct LiveRow {
    id: String,
    tenant: String,
    created_at: i64,
    replica: String,
    lease_until: i64,
    body: String,
    resume: Option<String>,
}

fn claim(
    conn: &mut Connection,
    replica: &str,
    now: i64,
    lease_until: i64,
    limit: i64,
) -> Result<Vec<LiveRecord>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let rows = {
        let mut stmt = tx
            .prepare_cached(
                "UPDATE live_runs SET replica = ?1, lease_until = ?2 \
                 WHERE id IN (SELECT id FROM live_runs WHERE lease_until < ?3 \
                              ORDER BY created_at, id LIMIT ?4) \
                 RETURNING tenant, body, replica, lease_until, resume",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map(params![replica, lease_until, now, limit], live_row)
            .map_err(backend)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(backend)?
    };
    tx.commit().map_err(backend)?;
    let mut out = rows
        .into_iter()
        .map(decode_live)
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by_key(|r| (r.response.created_at, r.response.id.clone()));
    Ok(out)
}

fn append(
    conn: &mut Connection,
    tenant: &str,
    id: &str,
    events: &[StoredEvent],
) -> Result<(), StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    {
        let mut stmt = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO response_events (response_id, sequence_number, tenant, body) \
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(backend)?;
        for e in events {
            let seq = i64::try_from(e.sequence_number).unwrap_or(i64::MAX);
            stmt.execute(params![id, seq, tenant, e.json])
                .map_err(backend)?;
        }
    }
    tx.commit().map_err(backend)
}

#[async_trait::async_trait]
impl RunStore for SqliteStore {
    async fn put_live(&self, run: LiveRun<'_>) -> Result<(), StoreError> {
        let row = LiveRow {
            id: run.response.id.clone(),
            tenant: run.tenant.to_owned(),
            created_at: i64::try_from(run.response.created_at).unwrap_or(i64::MAX),
            replica: run.replica.to_owned(),
            lease_until: millis(run.lease_until),
            body: serde_json::to_string(run.response)
                .map_err(|e| StoreError::Backend(format!("cannot encode live run: {e}")))?,
            resume: run.resume.map(str::to_owned),
        };
        on_writer(&self.writer, move |conn| put_live(conn, &row)).await
    }

    async fn get_live(&self, tenant: &str, id: &str) -> Result<Option<LiveRecord>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let row = conn
            .conn()?
            .prepare_cached(&format!(
                "SELECT {LIVE_COLUMNS} FROM live_runs WHERE id = ?1 AND tenant = ?2"
            ))
            .and_then(|mut s| s.query_row(params![id, tenant], live_row).optional())
            .map_err(backend)?;
        row.map(decode_live).transpose()
    }

    async fn renew_leases(
        &self,
        replica: &str,
        lease_until: UnixMillis,
    ) -> Result<u64, StoreError> {
        let replica = replica.to_owned();
        on_writer(&self.writer, move |conn| {
            conn.prepare_cached("UPDATE live_runs SET lease_until = ?1 WHERE replica = ?2")
                .and_then(|mut s| s.execute(params![millis(lease_until), replica]))
                .map(|n| n as u64)
                .map_err(backend)
        })
        .await
    }

    async fn claim_expired(
        &self,
        replica: &str,
        now: UnixMillis,
        lease_until: UnixMillis,
        limit: usize,
    ) -> Result<Vec<LiveRecord>, StoreError> {
        let replica = replica.to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        on_writer(&self.writer, move |conn| {
            claim(conn, &replica, millis(now), millis(lease_until), limit)
        })
        .await
    }

    async fn drop_live(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            conn.prepare_cached("DELETE FROM live_runs WHERE id = ?1 AND tenant = ?2")
                .and_then(|mut s| s.execute(params![id, tenant]))
                .map(|n| n > 0)
                .map_err(backend)
        })
        .await
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
        let (tenant, id, events) = (tenant.to_owned(), id.to_owned(), events.to_vec());
        on_writer(&self.writer, move |conn| {
            append(conn, &tenant, &id, &events)
        })
        .await
    }

    async fn events_after(
        &self,
        tenant: &str,
        id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let mut conn = self.readers.acquire(&self.writer).await?;
        let mut stmt = conn
            .conn()?
            .prepare_cached(
                "SELECT sequence_number, body FROM response_events \
                 WHERE response_id = ?1 AND tenant = ?2 AND sequence_number > ?3 \
                 ORDER BY sequence_number",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map(params![id, tenant, after], |r| {
                Ok(StoredEvent {
                    sequence_number: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                    json: r.get(1)?,
                })
            })
            .map_err(backend)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(backend)
    }
}

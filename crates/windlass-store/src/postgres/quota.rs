//! The quota port on Postgres: the same token buckets as the in-process
//! counter (capacity = the per-minute limit, refilled continuously at
//! limit/60 per second, starting full), kept in `quota_buckets` so every
//! replica spends the same budget.
//!
//! Each call is one transaction: create the buckets it needs (full), lock
//! them in a fixed order (so replicas never deadlock), refill and decide
//! with the database's clock, write back. A refused admit writes nothing.

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::{Pool, Transaction};
use windlass_engine::{
    QuotaCounter, QuotaError, QuotaKind, QuotaLimits, QuotaSubject, QuotaVerdict,
};

const MINUTE: f64 = 60.0;

/// A [`QuotaCounter`] shared by the replicas of one database.
#[derive(Clone)]
pub struct PgQuota {
    pool: Pool,
}

impl PgQuota {
    pub(crate) fn new(pool: Pool) -> PgQuota {
        PgQuota { pool }
    }
}

fn kind_code(kind: QuotaKind) -> i16 {
    match kind {
        QuotaKind::Requests => 0,
        QuotaKind::Tokens => 1,
    }
}

fn failed(e: impl std::fmt::Display) -> QuotaError {
    QuotaError(format!("postgres: {e}"))
}

/// One bucket a call needs: its key and capacity.
struct Want {
    subject: String,
    kind: QuotaKind,
    limit: u64,
}

/// A locked bucket, refilled to `now`.
#[derive(Clone, Copy)]
struct Level {
    level: f64,
}

/// The buckets `subjects` have limits for, of the kinds asked.
fn wanted(subjects: &[(QuotaSubject, QuotaLimits)], kinds: &[QuotaKind]) -> Vec<Want> {
    let mut out = Vec::new();
    for (subject, limits) in subjects {
        for &kind in kinds {
            let limit = match kind {
                QuotaKind::Requests => limits.requests_per_minute,
                QuotaKind::Tokens => limits.tokens_per_minute,
            };
            if let Some(limit) = limit {
                out.push(Want {
                    subject: subject.as_str().to_owned(),
                    kind,
                    limit,
                });
            }
        }
    }
    out
}

/// Creates the missing buckets (full), locks them all in key order, and
/// returns each refilled to the database's `now` (also returned).
async fn lock_refilled(
    tx: &Transaction<'_>,
    wants: &[Want],
) -> Result<(HashMap<(String, i16), Level>, f64), QuotaError> {
    let subjects: Vec<&str> = wants.iter().map(|w| w.subject.as_str()).collect();
    let kinds: Vec<i16> = wants.iter().map(|w| kind_code(w.kind)).collect();
    let limits: Vec<f64> = wants.iter().map(|w| w.limit as f64).collect();
    tx.execute(
        "INSERT INTO quota_buckets (subject, kind, level, updated_at) \
         SELECT s, k, l, extract(epoch FROM clock_timestamp()) \
         FROM unnest($1::text[], $2::smallint[], $3::float8[]) AS t (s, k, l) \
         ORDER BY s, k \
         ON CONFLICT DO NOTHING",
        &[&subjects, &kinds, &limits],
    )
    .await
    .map_err(failed)?;
    let rows = tx
        .query(
            "SELECT b.subject, b.kind, b.level, b.updated_at FROM quota_buckets b \
             JOIN unnest($1::text[], $2::smallint[]) AS t (s, k) \
               ON b.subject = t.s AND b.kind = t.k \
             ORDER BY b.subject, b.kind FOR UPDATE OF b",
            &[&subjects, &kinds],
        )
        .await
        .map_err(failed)?;
    // Read after the locks: the time the decision is made at.
    let now: f64 = tx
        .query_one("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
        .await
        .map_err(failed)?
        .get(0);
    let limit_of: HashMap<(&str, i16), u64> = wants
        .iter()
        .map(|w| ((w.subject.as_str(), kind_code(w.kind)), w.limit))
        .collect();
    let mut levels = HashMap::new();
    for row in rows {
        let subject: String = row.get(0);
        let kind: i16 = row.get(1);
        let level: f64 = row.get(2);
        let at: f64 = row.get(3);
        let limit = limit_of
            .get(&(subject.as_str(), kind))
            .copied()
            .unwrap_or(0) as f64;
        let refilled = (level + (now - at).max(0.0) * limit / MINUTE).min(limit);
        levels.insert((subject, kind), Level { level: refilled });
    }
    Ok((levels, now))
}

/// Writes the levels back, refilled as of `now`.
async fn store_levels(
    tx: &Transaction<'_>,
    levels: &HashMap<(String, i16), Level>,
    now: f64,
) -> Result<(), QuotaError> {
    let subjects: Vec<&str> = levels.keys().map(|(s, _)| s.as_str()).collect();
    let kinds: Vec<i16> = levels.keys().map(|(_, k)| *k).collect();
    let values: Vec<f64> = levels.values().map(|l| l.level).collect();
    tx.execute(
        "UPDATE quota_buckets b SET level = t.l, updated_at = $4 \
         FROM unnest($1::text[], $2::smallint[], $3::float8[]) AS t (s, k, l) \
         WHERE b.subject = t.s AND b.kind = t.k",
        &[&subjects, &kinds, &values, &now],
    )
    .await
    .map_err(failed)?;
    Ok(())
}

/// Seconds until `level` reaches `need` at the bucket's rate (1 s to 1 day).
fn wait_for(level: f64, need: f64, limit: u64) -> Duration {
    let rate = limit as f64 / MINUTE;
    let secs = if rate > 0.0 {
        ((need - level) / rate).ceil()
    } else {
        MINUTE
    };
    Duration::from_secs(secs.clamp(1.0, 24.0 * 3600.0) as u64)
}

#[async_trait::async_trait]
impl QuotaCounter for PgQuota {
    async fn admit(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
    ) -> Result<QuotaVerdict, QuotaError> {
        let wants = wanted(subjects, &[QuotaKind::Requests, QuotaKind::Tokens]);
        if wants.is_empty() {
            return Ok(QuotaVerdict::Allowed);
        }
        let mut conn = self.pool.get().await.map_err(failed)?;
        let tx = conn.transaction().await.map_err(failed)?;
        let (mut levels, now) = lock_refilled(&tx, &wants).await?;
        // In the order the subjects were given, like the in-process counter.
        for w in &wants {
            let code = kind_code(w.kind);
            let level = levels
                .get(&(w.subject.clone(), code))
                .map_or(w.limit as f64, |l| l.level);
            let need = match w.kind {
                QuotaKind::Requests => 1.0,
                QuotaKind::Tokens => f64::MIN_POSITIVE,
            };
            if level < need {
                // Dropped without commit: rolled back, nothing taken.
                return Ok(QuotaVerdict::Refused {
                    subject: subject_of(subjects, &w.subject),
                    kind: w.kind,
                    limit: w.limit,
                    retry_after: wait_for(level, need.max(1.0).min(w.limit as f64), w.limit),
                });
            }
        }
        for w in wants.iter().filter(|w| w.kind == QuotaKind::Requests) {
            if let Some(l) = levels.get_mut(&(w.subject.clone(), 0)) {
                l.level -= 1.0;
            }
        }
        store_levels(&tx, &levels, now).await?;
        tx.commit().await.map_err(failed)?;
        Ok(QuotaVerdict::Allowed)
    }

    async fn charge(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
        tokens: u64,
    ) -> Result<(), QuotaError> {
        let wants = wanted(subjects, &[QuotaKind::Tokens]);
        if wants.is_empty() {
            return Ok(());
        }
        let mut conn = self.pool.get().await.map_err(failed)?;
        let tx = conn.transaction().await.map_err(failed)?;
        let (mut levels, now) = lock_refilled(&tx, &wants).await?;
        for l in levels.values_mut() {
            l.level -= tokens as f64;
        }
        store_levels(&tx, &levels, now).await?;
        tx.commit().await.map_err(failed)
    }
}

/// The subject as given (its text form is what the table keys on).
fn subject_of(subjects: &[(QuotaSubject, QuotaLimits)], text: &str) -> QuotaSubject {
    subjects
        .iter()
        .map(|(s, _)| s)
        .find(|s| s.as_str() == text)
        .cloned()
        .unwrap_or_else(|| QuotaSubject::tenant(text))
}

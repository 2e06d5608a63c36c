//! Vector store expiry on SQLite: the sweep that marks stores whose
//! `expires_after` has passed and empties them, and the test the writes
//! that must not touch an expired store use.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use windlass_engine::{ExpiredVectorStore, StoreError};

use crate::codec::backend;
use crate::retrieval::records::to_i64;

/// True when the store is marked expired, or its policy has run out at
/// `now` (the sweep has not come by yet).
pub(super) fn is_expired(conn: &Connection, id: &str, now: u64) -> Result<bool, StoreError> {
    conn.prepare_cached(
        "SELECT 1 FROM vector_stores WHERE id = ?1 AND (expired_at IS NOT NULL \
         OR (expires_after_days IS NOT NULL \
             AND last_active_at + expires_after_days * 86400 <= ?2))",
    )
    .and_then(|mut s| s.query_row(params![id, to_i64(now)], |_| Ok(())).optional())
    .map(|found| found.is_some())
    .map_err(backend)
}

/// One transaction: mark, cancel what is still being ingested, delete the
/// chunks. The writer connection is the only one that writes, so two
/// sweeps in one process never overlap; `BEGIN IMMEDIATE` covers another
/// process on the same file.
pub(super) fn expire(
    conn: &mut Connection,
    now: u64,
) -> Result<Vec<ExpiredVectorStore>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let due: Vec<ExpiredVectorStore> = tx
        .prepare_cached(
            "UPDATE vector_stores SET expired_at = ?1 WHERE expired_at IS NULL \
             AND expires_after_days IS NOT NULL \
             AND last_active_at + expires_after_days * 86400 <= ?1 \
             RETURNING tenant, id",
        )
        .and_then(|mut s| {
            s.query_map([to_i64(now)], |r| {
                Ok(ExpiredVectorStore {
                    tenant: r.get(0)?,
                    id: r.get(1)?,
                })
            })?
            .collect()
        })
        .map_err(backend)?;
    for store in &due {
        for sql in [
            "UPDATE vector_store_files SET status = 'cancelled', claimed_by = NULL, \
             claimed_until = NULL WHERE vector_store_id = ?1 AND status = 'in_progress'",
            "DELETE FROM vector_store_chunks WHERE attachment IN \
             (SELECT seq FROM vector_store_files WHERE vector_store_id = ?1)",
            "UPDATE vector_store_files SET usage_bytes = 0 WHERE vector_store_id = ?1",
        ] {
            tx.execute(sql, [&store.id]).map_err(backend)?;
        }
    }
    tx.commit().map_err(backend)?;
    Ok(due)
}

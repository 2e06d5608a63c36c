//! Vector store expiry on Postgres: the sweep that marks stores whose
//! `expires_after` has passed and empties them, and the test the writes
//! that must not touch an expired store use.

use deadpool_postgres::GenericClient;
use windlass_engine::{ExpiredVectorStore, StoreError};

use super::error::backend;
use crate::retrieval::records::to_i64;

/// True when the store is marked expired, or its policy has run out at
/// `now` (the sweep has not come by yet).
pub(super) async fn is_expired(
    conn: &impl GenericClient,
    id: &str,
    now: u64,
) -> Result<bool, StoreError> {
    conn.query_opt(
        "SELECT 1 FROM vector_stores WHERE id = $1 AND (expired_at IS NOT NULL \
         OR (expires_after_days IS NOT NULL \
             AND last_active_at + expires_after_days * 86400 <= $2))",
        &[&id, &to_i64(now)],
    )
    .await
    .map(|row| row.is_some())
    .map_err(backend)
}

/// One transaction: mark, cancel what is still being ingested, delete the
/// chunks. Safe with several replicas sweeping at once: the `UPDATE`'s row
/// locks make a second sweep wait, re-check `expired_at IS NULL` and skip
/// the store; an attach holds the store's row lock too, and ingestion's
/// outcome locks the file's row, so neither can add chunks behind the
/// sweep.
pub(super) async fn expire(
    conn: &mut deadpool_postgres::Object,
    now: u64,
) -> Result<Vec<ExpiredVectorStore>, StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    let due: Vec<ExpiredVectorStore> = tx
        .query(
            "UPDATE vector_stores SET expired_at = $1 WHERE expired_at IS NULL \
             AND expires_after_days IS NOT NULL \
             AND last_active_at + expires_after_days * 86400 <= $1 \
             RETURNING tenant, id",
            &[&to_i64(now)],
        )
        .await
        .map_err(backend)?
        .iter()
        .map(|r| ExpiredVectorStore {
            tenant: r.get(0),
            id: r.get(1),
        })
        .collect();
    for store in &due {
        // Files first: their row locks wait for an ingestion finishing
        // now, whose chunks the delete below then sees.
        for sql in [
            "UPDATE vector_store_files SET status = 'cancelled', claimed_by = NULL, \
             claimed_until = NULL WHERE vector_store_id = $1 AND status = 'in_progress'",
            "DELETE FROM vector_store_chunks WHERE attachment IN \
             (SELECT seq FROM vector_store_files WHERE vector_store_id = $1)",
            "UPDATE vector_store_files SET usage_bytes = 0 WHERE vector_store_id = $1",
        ] {
            tx.execute(sql, &[&store.id]).await.map_err(backend)?;
        }
    }
    tx.commit().await.map_err(backend)?;
    Ok(due)
}

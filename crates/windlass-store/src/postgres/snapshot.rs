//! One snapshot for several reads: a read-only REPEATABLE READ transaction
//! (a leaf module: the reads that need one use it).

use deadpool_postgres::{Object, Transaction};
use tokio_postgres::IsolationLevel;
use windlass_engine::StoreError;

use super::error::backend;

/// Starts a read-only transaction whose reads all see the same snapshot.
pub(super) async fn read_snapshot(conn: &mut Object) -> Result<Transaction<'_>, StoreError> {
    conn.build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(backend)
}

//! How a Postgres failure becomes a store error, for every query of the
//! store (a leaf module: the store and all its parts use it).

use windlass_engine::StoreError;

/// Database failures are backend failures; the server's own message is the
/// useful part.
pub(crate) fn backend(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => StoreError::Backend(format!("postgres: {}", db.message())),
        None => StoreError::Backend(format!("postgres: {e}")),
    }
}

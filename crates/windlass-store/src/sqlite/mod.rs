//! The SQLite store: one WAL-mode database file, items shared by reference.
//!
//! Schema (see `migrations/`): `items` holds each item once, `responses` the
//! resources without their output, and `response_items` the ordered
//! references of each response, sectioned into history, input and output.

mod read;
mod write;

use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use windlass_engine::{ItemPage, NewResponse, PageRequest, ResponseStore, StoreError};
use windlass_protocol::{Item, ResponseResource};

use crate::codec::backend;

/// Reference sections, in transcript order.
pub(crate) const HISTORY: i64 = 0;
pub(crate) const INPUT: i64 = 1;
pub(crate) const OUTPUT: i64 = 2;

/// Enough connections for concurrent readers under WAL; SQLite serialises
/// writers anyway, so more would only add contention.
const POOL_SIZE: u32 = 8;

/// How long a writer waits for another writer before failing with "busy".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`ResponseStore`] backed by SQLite.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database file at `path` and brings
    /// its schema up to date.
    ///
    /// WAL lets readers proceed while a response is being saved, and
    /// `synchronous=NORMAL` is durable across crashes of the process in WAL
    /// mode while avoiding an fsync per transaction.
    pub async fn open(path: &str) -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(POOL_SIZE)
            .connect_with(options)
            .await
            .map_err(backend)?;
        Self::migrated(pool).await
    }

    /// A private in-memory database, for tests.
    ///
    /// It lives as long as its single connection, so the pool keeps exactly
    /// one connection open forever; one connection also avoids shared-cache
    /// table locks.
    pub async fn open_in_memory() -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::new()
            .in_memory(true)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(backend)?;
        Self::migrated(pool).await
    }

    async fn migrated(pool: SqlitePool) -> Result<SqliteStore, StoreError> {
        sqlx::migrate!("./migrations")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("migration failed: {e}")))?;
        Ok(SqliteStore { pool })
    }

    /// Closes every connection, checkpointing the WAL into the main file.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait::async_trait]
impl ResponseStore for SqliteStore {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        write::save(&self.pool, new).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        read::get(&self.pool, id).await
    }

    async fn load_context(&self, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        read::load_context(&self.pool, id).await
    }

    async fn input_items(
        &self,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        read::input_items(&self.pool, id, page).await
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        write::delete(&self.pool, id).await
    }

    async fn find_item(&self, item_id: &str) -> Result<Option<Item>, StoreError> {
        read::find_item(&self.pool, item_id).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map(drop)
            .map_err(backend)
    }
}

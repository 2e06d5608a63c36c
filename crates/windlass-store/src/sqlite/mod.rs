//! The SQLite store: one WAL-mode database file, items shared by reference.
//!
//! Schema (see `migrations/`): `items` holds each item once, `responses` the
//! resources without their output, and `response_items` the ordered
//! references of each response, sectioned into history, input and output.
//! A response's history is mostly not stored with it: it names the response
//! it continues (`history_parent`), whose transcript comes first.

mod checkpoint;
mod conn;
mod read;
mod write;

use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use tokio::sync::Mutex;
use windlass_engine::{ItemPage, NewResponse, PageRequest, ResponseStore, StoreError};
use windlass_protocol::{Item, ResponseResource};

use self::checkpoint::Checkpointer;
use self::conn::{Readers, Writer};
use crate::codec::backend;

/// Reference sections, in transcript order.
pub(crate) const HISTORY: i64 = 0;
pub(crate) const INPUT: i64 = 1;
pub(crate) const OUTPUT: i64 = 2;

/// Read connections of a file database. Each is a thread of sqlx's; reads
/// are short (a context load is one query), so a few suffice.
const READERS: u32 = 4;

/// How long a write waits for another process holding the write lock before
/// failing with "busy". Writers of this process never wait on it: they queue
/// on the writer mutex.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`ResponseStore`] backed by SQLite.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: Arc<Mutex<Writer>>,
    readers: Readers,
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
        // Checkpoints run on their own connection (see `checkpoint.rs`).
        let writer_options = options.clone().pragma("wal_autocheckpoint", "0");
        let writer = Self::migrated(writer_options.connect().await.map_err(backend)?).await?;
        let checkpoints = Checkpointer::start(&options).await?;
        // Connections are opened on demand and trusted when handed out: a
        // liveness ping per acquire was a round trip to the connection's
        // thread per read, and a local file does not drop connections.
        let pool = SqlitePoolOptions::new()
            .max_connections(READERS)
            .test_before_acquire(false)
            .connect_lazy_with(options);
        let writer = Arc::new(Mutex::new(Writer::open(writer, Some(checkpoints)).await?));
        Ok(SqliteStore {
            writer,
            readers: Readers::Pool(pool),
        })
    }

    /// A private in-memory database, for tests.
    ///
    /// It lives as long as its single connection, which therefore serves
    /// reads as well as writes.
    pub async fn open_in_memory() -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::new()
            .in_memory(true)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let writer = Self::migrated(options.connect().await.map_err(backend)?).await?;
        let writer = Arc::new(Mutex::new(Writer::open(writer, None).await?));
        Ok(SqliteStore {
            writer,
            readers: Readers::Writer,
        })
    }

    async fn migrated(mut conn: SqliteConnection) -> Result<SqliteConnection, StoreError> {
        // `run_direct` rather than `run`: `run` goes through `Acquire`, whose
        // higher-ranked bound makes the caller's future not provably `Send`.
        sqlx::migrate!("./migrations")
            .run_direct(&mut conn)
            .await
            .map_err(|e| StoreError::Backend(format!("migration failed: {e}")))?;
        Ok(conn)
    }

    /// Closes every connection; the last one checkpoints the WAL into the
    /// main file.
    pub async fn close(&self) {
        self.readers.close().await;
        self.writer.lock().await.close().await;
    }
}

#[async_trait::async_trait]
impl ResponseStore for SqliteStore {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        write::save(&self.writer, new).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::get(conn.conn()?, id).await
    }

    async fn load_context(&self, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::load_context(conn.conn()?, id).await
    }

    async fn input_items(
        &self,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::input_items(conn.conn()?, id, page).await
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        write::delete(&self.writer, id).await
    }

    async fn find_item(&self, item_id: &str) -> Result<Option<Item>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::find_item(conn.conn()?, item_id).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        conn.conn()?.ping().await.map_err(backend)
    }
}

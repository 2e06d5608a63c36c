//! The SQLite store: one WAL-mode database file, items shared by reference.
//!
//! Schema (see `migrations/`): `items` holds each item once, `responses` the
//! resources without their output, and `response_items` the ordered
//! references of each response, sectioned into history, input and output.
//! A response's history is mostly not stored with it: it names the response
//! it continues (`history_parent`), whose transcript comes first.

mod checkpoint;
mod conn;
mod containers;
mod conversations;
mod files;
mod group;
mod ingestion;
mod migrate;
mod observe;
mod prompts;
mod prune;
mod read;
mod runs;
mod save_sql;
mod save_thread;
mod sections;
mod trace;
mod vector_expiry;
mod vector_rows;
mod vector_search;
mod vector_stores;
mod write;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::Mutex;
use windlass_engine::{ItemPage, NewResponse, PageRequest, ResponseStore, StoreError, Trace};
use windlass_protocol::{Item, ResponseResource};

use self::checkpoint::{Checkpointer, WalBound};
use self::conn::{ReaderPool, Readers, Writer};
pub use self::observe::{SAVE_THREAD_NAME, SAVE_TIMING_TARGET};
use self::save_thread::Saves;
use crate::codec::backend;

/// Read connections of a file database. Reads are short (a context load is
/// one query) and hold a connection only while SQLite runs, so a few
/// suffice.
const READERS: usize = 4;

/// How long a write waits for another process holding the write lock before
/// failing with "busy". Writers of this process never wait on it: they queue
/// on the writer mutex. (Only another process writing the same file causes
/// it; writes wait on a blocking-pool thread, not a runtime worker.)
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements kept per connection: every statement this store
/// runs (the in-memory database runs reads and writes on one connection).
const STATEMENT_CACHE: usize = 64;

/// Settings of a file database.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Size past which the WAL is checkpointed and truncated (it can exceed
    /// it by a quarter second of writes); also SQLite's
    /// `journal_size_limit`, what a rewound WAL is cut back to.
    pub wal_limit_bytes: u64,
    /// How often, at most, database and WAL sizes are logged (while there
    /// are writes).
    pub size_log_interval: Duration,
    /// WAL size past which a checkpoint copies it into the database
    /// (checked after each commit; 0: after every commit, at most four
    /// times a second; never above `wal_limit_bytes`). Checkpoints run off
    /// the write path except for a short paused pass at their end (see
    /// `checkpoint.rs`), and the first commit after one starts the log over
    /// and syncs (fsyncs) its new header while every save queued behind it
    /// waits: checkpointing once per `wal_limit_bytes` of writes, not four
    /// times a second, keeps those waits rare enough to stay out of the
    /// p99 (BENCHMARKS.md, "Latency").
    pub checkpoint_bytes: u64,
    /// Saves are committed by one long-lived thread, and saves that queue
    /// while it commits share one commit (`save_thread.rs`, `group.rs`);
    /// off: one commit per save, each on a blocking-pool thread.
    pub group_commit: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            wal_limit_bytes: 64 * 1024 * 1024,
            checkpoint_bytes: 64 * 1024 * 1024,
            size_log_interval: Duration::from_secs(60),
            group_commit: true,
        }
    }
}

/// Bytes on disk of a file database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskUsage {
    pub db_bytes: u64,
    pub wal_bytes: u64,
}

/// A [`ResponseStore`] backed by SQLite.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: Arc<Mutex<Writer>>,
    readers: Arc<Readers>,
    /// `None` for the in-memory database.
    files: Option<Arc<WalBound>>,
    /// How saves reach the writer.
    saves: Saves,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database file at `path` and brings
    /// its schema up to date.
    ///
    /// WAL lets readers proceed while a response is being saved, and
    /// `synchronous=NORMAL` is durable across crashes of the process in WAL
    /// mode while avoiding an fsync per transaction.
    pub async fn open(path: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, SqliteOptions::default()).await
    }

    /// [`open`](Self::open) with explicit settings.
    pub async fn open_with(path: &str, options: SqliteOptions) -> Result<SqliteStore, StoreError> {
        let bound = WalBound {
            db: PathBuf::from(path),
            wal_limit_bytes: options.wal_limit_bytes,
            log_every: options.size_log_interval,
        };
        let limit = i64::try_from(options.wal_limit_bytes).unwrap_or(i64::MAX);
        let group_commit = options.group_commit;
        // Past the limit a truncating checkpoint follows: the threshold is
        // never above it.
        let checkpoint_bytes = options.checkpoint_bytes.min(options.wal_limit_bytes);
        let path = path.to_owned();
        // Opening and migrating touch the file (and may wait for another
        // process's lock): off the runtime threads.
        let (writer, checkpointer, readers) = tokio::task::spawn_blocking(move || {
            let mut writer = connect(&path)?;
            writer
                .pragma_update(None, "journal_mode", "WAL")
                .map_err(backend)?;
            migrate::migrate(&mut writer)?;
            // Checkpoints run on their own connection (see `checkpoint.rs`).
            writer
                .pragma_update(None, "wal_autocheckpoint", 0)
                .map_err(backend)?;
            // A rewound WAL is cut back to the limit rather than kept at its
            // largest size.
            writer
                .pragma_update(None, "journal_size_limit", limit)
                .map_err(backend)?;
            let checkpointer = connect(&path)?;
            checkpointer
                .pragma_update(None, "journal_size_limit", limit)
                .map_err(backend)?;
            checkpointer
                .busy_timeout(checkpoint::TRUNCATE_WAIT)
                .map_err(backend)?;
            let readers = (0..READERS)
                .map(|_| connect(&path))
                .collect::<Result<Vec<_>, _>>()?;
            Ok::<_, StoreError>((writer, checkpointer, readers))
        })
        .await
        .map_err(|e| StoreError::Backend(format!("opening the database: {e}")))??;
        let checkpoints = Checkpointer::start(checkpointer, bound.clone());
        let writer = Arc::new(Mutex::new(Writer::open(
            writer,
            Some(checkpoints.clone()),
            checkpoint_bytes,
        )?));
        // Weak: the checkpointer belongs to the writer.
        let paused = Arc::downgrade(&writer);
        checkpoints.pause_writes_with(Box::new(move || {
            let writer = paused.upgrade()?;
            Some(Box::new(writer.blocking_lock_owned()) as Box<dyn Send>)
        }));
        Ok(SqliteStore {
            saves: Saves::start(group_commit, &writer)?,
            writer,
            readers: Arc::new(Readers::Pool(ReaderPool::new(readers))),
            files: Some(Arc::new(bound)),
        })
    }

    /// A private in-memory database, for tests.
    ///
    /// It lives as long as its single connection, which therefore serves
    /// reads as well as writes.
    pub async fn open_in_memory() -> Result<SqliteStore, StoreError> {
        let mut conn = Connection::open_in_memory().map_err(backend)?;
        configure(&conn)?;
        migrate::migrate(&mut conn)?;
        let writer = Arc::new(Mutex::new(Writer::open(conn, None, 0)?));
        Ok(SqliteStore {
            saves: Saves::start(true, &writer)?,
            writer,
            readers: Arc::new(Readers::Writer),
            files: None,
        })
    }

    /// Sizes of the database and WAL files (`None` in memory).
    pub fn disk_usage(&self) -> Option<DiskUsage> {
        self.files.as_ref().map(|f| {
            let (db_bytes, wal_bytes) = f.sizes();
            DiskUsage {
                db_bytes,
                wal_bytes,
            }
        })
    }

    /// Closes every connection; the last one, the writer, checkpoints the
    /// WAL into the main file.
    pub async fn close(&self) {
        self.readers.close().await;
        // The checkpointer first, without the writer's lock: a checkpoint
        // under way may be waiting for that lock to pause the writes.
        let checkpoints = self.writer.lock().await.take_checkpoints();
        if let Some(c) = checkpoints {
            c.close().await;
        }
        self.writer.lock().await.close().await;
    }
}

/// A configured connection to the file at `path`, created if missing.
fn connect(path: &str) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(backend)?;
    configure(&conn)?;
    Ok(conn)
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(backend)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(backend)?;
    // Statements build small temporary tables: each reference row's
    // `CHECK (section IN (...))` is an ephemeral index (and the old save
    // trigger materialised its items SELECT). On a file (the default) every
    // save created, wrote and deleted temp files: 110 of the save thread's
    // 262 µs per save in a profile.
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(backend)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(())
}

#[async_trait::async_trait]
impl ResponseStore for SqliteStore {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        write::save(&self.writer, &self.saves, new).await
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::get(conn.conn()?, tenant, id)
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::load_context(conn.conn()?, tenant, id)
    }

    async fn input_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::input_items(conn.conn()?, tenant, id, page)
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        write::delete(&self.writer, tenant, id).await
    }

    async fn find_item(&self, tenant: &str, item_id: &str) -> Result<Option<Item>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::find_item(conn.conn()?, tenant, item_id)
    }

    async fn prune(&self, created_before: u64) -> Result<u64, StoreError> {
        prune::prune(&self.writer, created_before).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read::ping(conn.conn()?)
    }

    async fn trace(&self, tenant: &str, response_id: &str) -> Result<Option<Trace>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        trace::load(conn.conn()?, tenant, response_id)
    }
}

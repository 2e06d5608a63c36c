//! Connection access: one writer connection behind an async mutex, and the
//! connections reads use.
//!
//! All writes of the process go through a single connection, so concurrent
//! saves queue on a tokio mutex (a cheap in-process wait, in arrival order)
//! instead of racing for SQLite's file lock and sleeping in its busy handler
//! (1, 2, 5 … 100 ms back-off steps: that was the whole p99 tail).

use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::{Executor, Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{Mutex, MutexGuard};
use windlass_engine::StoreError;

use super::checkpoint::Checkpointer;
use super::write::SAVE_TRIGGER;
use crate::codec::backend;

/// The writer connection.
#[derive(Debug)]
pub(super) struct Writer {
    /// `None` once the store is closed.
    conn: Option<SqliteConnection>,
    /// Checkpoints the WAL after commits (file databases only).
    checkpoints: Option<Checkpointer>,
}

impl Writer {
    /// Prepares `conn` (migrated) for writing.
    pub(super) async fn open(
        mut conn: SqliteConnection,
        checkpoints: Option<Checkpointer>,
    ) -> Result<Writer, StoreError> {
        conn.execute(SAVE_TRIGGER).await.map_err(backend)?;
        Ok(Writer {
            conn: Some(conn),
            checkpoints,
        })
    }

    pub(super) fn conn(&mut self) -> Result<&mut SqliteConnection, StoreError> {
        self.conn.as_mut().ok_or_else(closed)
    }

    /// To call after each commit.
    pub(super) fn committed(&self) {
        if let Some(c) = &self.checkpoints {
            c.committed();
        }
    }

    pub(super) async fn close(&mut self) {
        if let Some(c) = self.checkpoints.take() {
            c.close().await;
        }
        if let Some(conn) = self.conn.take() {
            // Closing the last connection checkpoints the WAL; a failure here
            // leaves a WAL file SQLite replays on the next open.
            let _ = sqlx::Connection::close(conn).await;
        }
    }
}

fn closed() -> StoreError {
    StoreError::Backend("the store is closed".into())
}

/// Where reads run.
#[derive(Debug, Clone)]
pub(super) enum Readers {
    /// A file database: a pool of read connections (WAL lets them read while
    /// the writer writes).
    Pool(SqlitePool),
    /// A private in-memory database exists only on its one connection, so
    /// reads share the writer.
    Writer,
}

/// A connection to read on, from either source.
pub(super) enum ReadConn<'a> {
    Pooled(PoolConnection<Sqlite>),
    Shared(MutexGuard<'a, Writer>),
}

impl Readers {
    pub(super) async fn acquire<'a>(
        &self,
        writer: &'a Arc<Mutex<Writer>>,
    ) -> Result<ReadConn<'a>, StoreError> {
        match self {
            Readers::Pool(pool) => pool.acquire().await.map(ReadConn::Pooled).map_err(backend),
            Readers::Writer => Ok(ReadConn::Shared(writer.lock().await)),
        }
    }

    pub(super) async fn close(&self) {
        if let Readers::Pool(pool) = self {
            pool.close().await;
        }
    }
}

impl ReadConn<'_> {
    pub(super) fn conn(&mut self) -> Result<&mut SqliteConnection, StoreError> {
        match self {
            ReadConn::Pooled(c) => Ok(c),
            ReadConn::Shared(w) => w.conn(),
        }
    }
}

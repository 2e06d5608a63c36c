//! WAL checkpoints off the write path.
//!
//! By default SQLite checkpoints inside the commit that pushes the WAL past
//! 1000 pages: that save then copies every page back into the database file
//! and fsyncs it, several milliseconds during which the single writer, and
//! every save queued behind it, waits. The writer connection therefore has
//! automatic checkpoints off, and this task checkpoints on its own
//! connection after commits. A `PASSIVE` checkpoint takes no write lock, so
//! saves keep appending to the WAL meanwhile.

use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Executor, SqliteConnection};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use windlass_engine::StoreError;

use crate::codec::backend;

/// Commits between two checkpoints coalesce for at least this long, so a
/// busy server checkpoints a few times a second, not once per save.
const MIN_INTERVAL: Duration = Duration::from_millis(250);

pub(super) enum Signal {
    /// Something was committed.
    Commit,
    /// Checkpoint what is left, close the connection, then answer.
    Close(oneshot::Sender<()>),
}

/// The writer's handle on the checkpoint task.
#[derive(Debug, Clone)]
pub(super) struct Checkpointer {
    tx: mpsc::Sender<Signal>,
}

impl Checkpointer {
    /// Opens the task's connection and starts it on the current runtime. It
    /// ends when every handle is dropped or on [`close`](Self::close).
    pub(super) async fn start(options: &SqliteConnectOptions) -> Result<Self, StoreError> {
        let conn = options.connect().await.map_err(backend)?;
        // One pending signal is enough: commits after it are covered by the
        // checkpoint it triggers.
        let (tx, rx) = mpsc::channel(1);
        tokio::spawn(run(conn, rx));
        Ok(Checkpointer { tx })
    }

    /// Never waits: a full channel already holds a pending checkpoint.
    pub(super) fn committed(&self) {
        let _ = self.tx.try_send(Signal::Commit);
    }

    pub(super) async fn close(&self) {
        let (done, finished) = oneshot::channel();
        if self.tx.send(Signal::Close(done)).await.is_ok() {
            let _ = finished.await;
        }
    }
}

async fn run(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Signal>) {
    let mut next = rx.recv().await;
    while let Some(signal) = next.take() {
        checkpoint(&mut conn).await;
        if let Signal::Close(done) = signal {
            finish(conn, Some(done)).await;
            return;
        }
        // Commits during the interval are checkpointed once, after it; a
        // close request is served at once.
        let until = Instant::now() + MIN_INTERVAL;
        loop {
            match tokio::time::timeout_at(until, rx.recv()).await {
                Ok(Some(Signal::Commit)) => next = Some(Signal::Commit),
                Ok(Some(close @ Signal::Close(_))) => {
                    next = Some(close);
                    break;
                }
                Ok(None) => {
                    if next.is_some() {
                        checkpoint(&mut conn).await;
                    }
                    finish(conn, None).await;
                    return;
                }
                Err(_elapsed) => break,
            }
        }
        if next.is_none() {
            next = rx.recv().await;
        }
    }
    finish(conn, None).await;
}

async fn checkpoint(conn: &mut SqliteConnection) {
    // A failed checkpoint is retried after the next commit; the WAL only
    // grows meanwhile, nothing is lost.
    if let Err(e) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").await {
        tracing::warn!(error = %e, "WAL checkpoint failed");
    }
}

async fn finish(conn: SqliteConnection, done: Option<oneshot::Sender<()>>) {
    let _ = sqlx::Connection::close(conn).await;
    if let Some(done) = done {
        let _ = done.send(());
    }
}

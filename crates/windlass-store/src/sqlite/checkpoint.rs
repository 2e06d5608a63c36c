//! WAL checkpoints off the write path.
//!
//! By default SQLite checkpoints inside the commit that pushes the WAL past
//! 1000 pages: that save then copies every page back into the database file
//! and fsyncs it, several milliseconds during which the single writer, and
//! every save queued behind it, waits. The writer connection therefore has
//! automatic checkpoints off, and this task checkpoints on its own
//! connection after commits. A `PASSIVE` checkpoint takes no write lock, so
//! saves keep appending to the WAL meanwhile.
//!
//! Like saves, a checkpoint (which copies pages and fsyncs the database
//! file) runs on tokio's blocking pool, never on a runtime thread.

use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

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
    /// Starts the task, which checkpoints on `conn`, on the current
    /// runtime. It ends when every handle is dropped or on
    /// [`close`](Self::close).
    pub(super) fn start(conn: Connection) -> Self {
        // One pending signal is enough: commits after it are covered by the
        // checkpoint it triggers.
        let (tx, rx) = mpsc::channel(1);
        tokio::spawn(run(conn, rx));
        Checkpointer { tx }
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

async fn run(mut conn: Connection, mut rx: mpsc::Receiver<Signal>) {
    let mut next = rx.recv().await;
    while let Some(signal) = next.take() {
        let Some(back) = checkpoint(conn).await else {
            return;
        };
        conn = back;
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
                        let Some(back) = checkpoint(conn).await else {
                            return;
                        };
                        conn = back;
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

/// Checkpoints on the blocking pool and hands the connection back; `None`
/// if the blocking task could not run (the runtime is shutting down) or
/// panicked, which ends checkpointing (the connection is gone with it; a
/// pending close is answered by its sender being dropped).
async fn checkpoint(conn: Connection) -> Option<Connection> {
    let done = tokio::task::spawn_blocking(move || {
        // A failed checkpoint is retried after the next commit; the WAL only
        // grows meanwhile, nothing is lost.
        if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)") {
            tracing::warn!(error = %e, "WAL checkpoint failed");
        }
        conn
    });
    match done.await {
        Ok(conn) => Some(conn),
        Err(e) => {
            tracing::warn!(error = %e, "WAL checkpoint task failed; checkpoints stop");
            None
        }
    }
}

/// Closes the connection off the runtime threads (when the store is dropped
/// without `close`, this may be the file's last connection, whose close
/// checkpoints), then answers a close request.
async fn finish(conn: Connection, done: Option<oneshot::Sender<()>>) {
    let _ = tokio::task::spawn_blocking(move || drop(conn)).await;
    if let Some(done) = done {
        let _ = done.send(());
    }
}

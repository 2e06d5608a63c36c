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
//!
//! Passive checkpoints alone do not bound the WAL: SQLite rewinds the log
//! only after a checkpoint that copied every frame while no reader used it,
//! which steady writes and reads never allow (a 3-minute soak grew it to
//! 1.45 GB). So once the `-wal` file passes the configured limit a
//! `TRUNCATE` checkpoint follows the passive one: it waits for the readers
//! of the moment (reads are single short queries) and for the writer's
//! current save, copies the few frames the passive pass left, and truncates
//! the file to zero. That pass holds the write lock only while it copies
//! what is left, so saves wait milliseconds, not the whole copy. Between two
//! checks the WAL can grow by at most [`MIN_INTERVAL`] of writes.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Commits between two checkpoints coalesce for at least this long, so a
/// busy server checkpoints a few times a second, not once per save.
const MIN_INTERVAL: Duration = Duration::from_millis(250);

/// The checkpoint connection's busy timeout: how long a truncating
/// checkpoint waits for readers and the writer before giving up this time.
pub(super) const TRUNCATE_WAIT: Duration = Duration::from_millis(200);

pub(super) enum Signal {
    /// Something was committed.
    Commit,
    /// Checkpoint what is left, close the connection, then answer.
    Close(oneshot::Sender<()>),
}

/// Where the database lives and how large its WAL may grow.
#[derive(Debug, Clone)]
pub(super) struct WalBound {
    pub db: PathBuf,
    pub wal_limit_bytes: u64,
    /// Sizes are logged at most this often, when there are writes.
    pub log_every: Duration,
}

impl WalBound {
    pub(super) fn wal_path(&self) -> PathBuf {
        let mut p = self.db.clone().into_os_string();
        p.push("-wal");
        PathBuf::from(p)
    }

    /// (database bytes, WAL bytes); 0 for a file that does not exist.
    pub(super) fn sizes(&self) -> (u64, u64) {
        let len = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        (len(&self.db), len(&self.wal_path()))
    }
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
    pub(super) fn start(conn: Connection, bound: WalBound) -> Self {
        // One pending signal is enough: commits after it are covered by the
        // checkpoint it triggers.
        let (tx, rx) = mpsc::channel(1);
        let checker = Checker {
            bound,
            last_log: None,
        };
        tokio::spawn(run(conn, checker, rx));
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

/// The checkpoint task's own state: the bound and when sizes were logged.
struct Checker {
    bound: WalBound,
    last_log: Option<Instant>,
}

impl Checker {
    fn log_sizes(&mut self) {
        let now = Instant::now();
        if self
            .last_log
            .is_some_and(|t| now.duration_since(t) < self.bound.log_every)
        {
            return;
        }
        self.last_log = Some(now);
        let (db, wal) = self.bound.sizes();
        tracing::info!(
            db_bytes = db,
            wal_bytes = wal,
            wal_limit_bytes = self.bound.wal_limit_bytes,
            "store size"
        );
    }
}

async fn run(mut conn: Connection, mut checker: Checker, mut rx: mpsc::Receiver<Signal>) {
    let mut next = rx.recv().await;
    while let Some(signal) = next.take() {
        let Some(back) = checkpoint(conn, &mut checker).await else {
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
                        let Some(back) = checkpoint(conn, &mut checker).await else {
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
async fn checkpoint(conn: Connection, checker: &mut Checker) -> Option<Connection> {
    checker.log_sizes();
    let bound = checker.bound.clone();
    let done = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        // A failed checkpoint is retried after the next commit; the WAL only
        // grows meanwhile, nothing is lost.
        let frames = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
        });
        let frames = match frames {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(error = %e, "WAL checkpoint failed");
                (-1, -1)
            }
        };
        let (_, wal) = bound.sizes();
        if wal > bound.wal_limit_bytes {
            truncate(&conn, wal);
        }
        tracing::debug!(
            target: super::observe::SAVE_TIMING_TARGET,
            checkpoint_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            wal_frames = frames.0,
            copied_frames = frames.1,
            wal_bytes = wal,
            "WAL checkpoint"
        );
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

/// Copies what is left and truncates the WAL. It waits for readers at most
/// [`TRUNCATE_WAIT`] (the checkpoint connection's busy timeout) while
/// holding the write lock, so a stream of overlapping reads cannot stall
/// saves for long (checkpoint starvation): a busy result is retried after
/// the next commit.
fn truncate(conn: &Connection, wal_bytes: u64) {
    let busy = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
        row.get::<_, i64>(0)
    });
    match busy {
        Ok(0) => tracing::debug!(wal_bytes, "WAL past its limit: truncated"),
        Ok(_) => tracing::warn!(wal_bytes, "WAL past its limit but busy; truncating later"),
        Err(e) => tracing::warn!(error = %e, wal_bytes, "truncating the WAL failed"),
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

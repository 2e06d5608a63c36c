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
//! Passive checkpoints alone do not rewind the WAL: SQLite starts the log
//! over only after a checkpoint that copied every frame, and steady saves
//! append while one copies. So after a passive pass copied what it saw, a
//! second one copies what was appended meanwhile, and a third runs with
//! the writes paused ([`catch_up`]): it has a few milliseconds of frames to
//! copy, and the next commit starts the log over. Readers can still keep a
//! checkpoint from copying everything (a 3-minute soak of passive passes
//! grew the WAL to 1.45 GB), so once the `-wal` file passes the configured
//! limit and the catch-up did not rewind it, a `TRUNCATE` checkpoint
//! follows: it waits for the readers of the moment (reads are single short
//! queries), copies what is left and truncates the file to zero, holding
//! SQLite's write lock meanwhile (~40 ms for a 64 MiB log here). Between two
//! checks the WAL can grow by at most [`MIN_INTERVAL`] of writes.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::observe::{micros, SAVE_TIMING_TARGET};

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

/// Stops every write of the process until the returned guard is dropped
/// (`None`: the store is gone). Set once the writer exists.
pub(super) type PauseWrites = Box<dyn Fn() -> Option<Box<dyn Send>> + Send + Sync>;

/// The writer's handle on the checkpoint task.
#[derive(Clone)]
pub(super) struct Checkpointer {
    tx: mpsc::Sender<Signal>,
    pause: Arc<OnceLock<PauseWrites>>,
}

impl std::fmt::Debug for Checkpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpointer").finish_non_exhaustive()
    }
}

impl Checkpointer {
    /// Starts the task, which checkpoints on `conn`, on the current
    /// runtime. It ends when every handle is dropped or on
    /// [`close`](Self::close).
    pub(super) fn start(conn: Connection, bound: WalBound) -> Self {
        // One pending signal is enough: commits after it are covered by the
        // checkpoint it triggers.
        let (tx, rx) = mpsc::channel(1);
        let pause = Arc::new(OnceLock::new());
        let checker = Checker {
            bound,
            last_log: None,
            pause: pause.clone(),
        };
        tokio::spawn(run(conn, checker, rx));
        Checkpointer { tx, pause }
    }

    /// How the catch-up pass stops the writes (see [`catch_up`]); without
    /// it, checkpoints are passive only.
    pub(super) fn pause_writes_with(&self, pause: PauseWrites) {
        let _ = self.pause.set(pause);
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
    pause: Arc<OnceLock<PauseWrites>>,
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
        // Asked for while it ran: covered by it (the catch-up pass copied
        // every frame up to its end), unless a close is waiting.
        if let Ok(close @ Signal::Close(_)) = rx.try_recv() {
            next = Some(close);
            continue;
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
    let pause = checker.pause.clone();
    let done = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        // A failed checkpoint is retried after the next commit; the WAL only
        // grows meanwhile, nothing is lost.
        let frames = passive(&conn);
        let copied_all = frames.0 >= 0 && frames.0 == frames.1;
        let paused = match copied_all {
            true => catch_up(&conn, &bound, pause.get()),
            false => None,
        };
        let rewinds = paused.is_some_and(|p| p.rewinds);
        let (_, wal) = bound.sizes();
        // The log starts over at the next commit (and is cut back to the
        // limit then); only a log readers kept from rewinding is truncated.
        if !rewinds && wal > bound.wal_limit_bytes {
            truncate(&conn, wal);
        }
        tracing::debug!(
            target: SAVE_TIMING_TARGET,
            checkpoint_us = micros(started.elapsed()),
            wal_frames = frames.0,
            copied_frames = frames.1,
            wal_bytes = wal,
            rewinds,
            writes_paused_us = paused.map_or(0, |p| p.us),
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

/// (frames in the log, frames copied); (-1, -1) when it failed.
fn passive(conn: &Connection) -> (i64, i64) {
    let frames = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok((row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
    });
    frames.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "WAL checkpoint failed");
        (-1, -1)
    })
}

/// The catch-up, so that the log starts over. Under steady writes a
/// passive checkpoint never ends with every frame copied: saves append
/// while it copies, so SQLite never rewinds the log and it grew to the
/// limit, where the truncating checkpoint held the write lock for ~40 ms
/// and every save waited (BENCHMARKS.md, "Latency"). Instead a second
/// passive pass copies what the first one left, the WAL is synced, and a
/// last pass runs with the writes paused (the writer's own mutex: saves
/// queue on the save thread and are woken at once, not by SQLite's busy
/// back-off): it copies and syncs only the frames of the last few
/// milliseconds. `None` when the writes were not paused.
fn catch_up(conn: &Connection, bound: &WalBound, pause: Option<&PauseWrites>) -> Option<Paused> {
    let pause = pause?;
    // A second pass without the pause copies what the first one left
    // (the frames of its own ~100 ms), so the paused pass has only the
    // frames of a few milliseconds to copy and sync.
    let (log, copied) = passive(conn);
    if log < 0 || log != copied {
        return None;
    }
    // Only shortens the paused pass (its own sync then has little left to
    // write); if the file cannot be opened or synced, that pass syncs it.
    if let Ok(wal) = std::fs::File::open(bound.wal_path()) {
        let _ = wal.sync_data();
    }
    let guard = pause()?;
    let paused = std::time::Instant::now();
    let (log, copied) = passive(conn);
    drop(guard);
    Some(Paused {
        us: micros(paused.elapsed()),
        rewinds: log >= 0 && log == copied,
    })
}

/// The paused pass of a checkpoint.
#[derive(Clone, Copy)]
struct Paused {
    /// How long the writes waited.
    us: u64,
    /// Every frame was copied: the next commit starts the log over.
    rewinds: bool,
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

//! The save thread: one long-lived OS thread that commits every save.
//!
//! A save encodes its row on the caller's task, sends it down a channel and
//! awaits its own result. The thread sleeps on the channel; woken by a row,
//! it takes every row queued by then, holds the writer connection and
//! commits them in one transaction, each under its own savepoint (a
//! duplicate id fails that save only; a lone row needs none). Only then
//! does each caller hear its result, so a save is committed before its
//! caller's terminal event, as before.
//!
//! No timer: a lone save is committed at once. Saves that arrive while a
//! commit runs share the next one. Compared with the flush task per group
//! it replaced (a spawned task that waited for the writer, then a
//! blocking-pool thread), a save costs one thread wake-up and one task
//! wake-up, and no task is spawned per group: the same CPU per stored
//! request, a lower median latency (docs/benchmarks-history.md, "Save thread").
//!
//! Other writes (deletes, pruning, live runs, conversations) still run on
//! the same writer connection under its async mutex; the thread takes that
//! mutex per group (a blocking lock: it is not a runtime thread).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{oneshot, Mutex};
use windlass_engine::StoreError;

use super::conn::Writer;
use super::group::{clone_err, commit, SaveRow};
use super::observe::{micros, SAVE_THREAD_NAME, SAVE_TIMING_TARGET};

type Done = oneshot::Sender<Result<(), StoreError>>;

/// A row on its way to the thread, with when it was queued.
type Queued = (SaveRow, Done, Instant);

/// The callers' end of the save thread. The thread ends when the last
/// handle is dropped.
#[derive(Debug)]
pub(super) struct SaveThread {
    rows: Sender<Queued>,
}

impl SaveThread {
    /// Starts the thread that commits saves on `writer`.
    pub(super) fn start(writer: Arc<Mutex<Writer>>) -> Result<SaveThread, StoreError> {
        let (rows, queued) = mpsc::channel();
        std::thread::Builder::new()
            .name(SAVE_THREAD_NAME.to_owned())
            .spawn(move || run(&queued, &writer))
            .map_err(|e| {
                StoreError::Backend(format!("cannot start the SQLite save thread: {e}"))
            })?;
        Ok(SaveThread { rows })
    }

    /// Queues `row` and waits until it is committed (or refused). A caller
    /// that stops waiting does not stop the save.
    pub(super) async fn save(&self, row: SaveRow) -> Result<(), StoreError> {
        let (done, result) = oneshot::channel();
        self.rows
            .send((row, done, Instant::now()))
            .map_err(|_| StoreError::Backend("the SQLite save thread has stopped".into()))?;
        result
            .await
            .map_err(|_| StoreError::Backend("the save was dropped by the writer".into()))?
    }
}

/// The thread's loop: one group per wake-up, until every sender is gone.
fn run(queued: &Receiver<Queued>, writer: &Mutex<Writer>) {
    let mut last = Sched::now();
    while let Ok(first) = queued.recv() {
        let woke = Instant::now();
        let at_wake = Sched::now();
        let mut guard = writer.blocking_lock();
        // Rows that arrived while the writer was being taken join the group.
        let group: Vec<_> = std::iter::once(first).chain(queued.try_iter()).collect();
        let locked = Instant::now();
        let at_commit = Sched::now();
        let before = guard.wal_frames();
        let results = match guard.conn() {
            Ok(conn) => commit(conn, group.iter().map(|(r, _, _)| r)),
            Err(e) => group.iter().map(|_| Err(clone_err(&e))).collect(),
        };
        if results.iter().any(Result::is_ok) {
            guard.committed();
        }
        // The log started over: this commit wrote and synced a new header.
        let rewound = guard.wal_frames() < before;
        drop(guard);
        let committed = Instant::now();
        let after = Sched::now();
        let oldest = group.first().map_or(woke, |(_, _, at)| *at);
        tracing::debug!(
            target: SAVE_TIMING_TARGET,
            rows = group.len() as u64,
            queued_us = micros(woke - oldest),
            wake_runq_us = at_wake.runq_since(&last),
            lock_us = micros(locked - woke),
            commit_us = micros(committed - locked),
            commit_cpu_us = after.cpu_since(&at_commit),
            commit_runq_us = after.runq_since(&at_commit),
            wal_rewound = rewound,
            "save group committed"
        );
        last = after;
        for ((_, done, _), result) in group.into_iter().zip(results) {
            let _ = done.send(result);
        }
    }
}

/// This thread's scheduler accounting (Linux `schedstat`: time on a CPU and
/// time runnable but waiting for one, in ns), read only while the timing
/// events are enabled: it splits a slow commit into work, waiting for a CPU
/// (a busy machine) and blocking (the disk, a lock).
#[derive(Default)]
struct Sched {
    cpu_ns: u64,
    runq_ns: u64,
}

impl Sched {
    fn now() -> Sched {
        if !tracing::enabled!(target: SAVE_TIMING_TARGET, tracing::Level::DEBUG) {
            return Sched::default();
        }
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0));
        Sched {
            cpu_ns: fields.next().unwrap_or(0),
            runq_ns: fields.next().unwrap_or(0),
        }
    }

    fn cpu_since(&self, earlier: &Sched) -> u64 {
        self.cpu_ns.saturating_sub(earlier.cpu_ns) / 1000
    }

    fn runq_since(&self, earlier: &Sched) -> u64 {
        self.runq_ns.saturating_sub(earlier.runq_ns) / 1000
    }
}

/// How saves reach the writer connection.
#[derive(Debug, Clone)]
pub(super) enum Saves {
    /// One commit per save, each on a blocking-pool thread.
    PerSave,
    /// Group commit on the save thread ([`SaveThread`]).
    Thread(Arc<SaveThread>),
}

impl Saves {
    pub(super) fn start(
        group_commit: bool,
        writer: &Arc<Mutex<Writer>>,
    ) -> Result<Saves, StoreError> {
        Ok(match group_commit {
            false => Saves::PerSave,
            true => Saves::Thread(Arc::new(SaveThread::start(writer.clone())?)),
        })
    }
}

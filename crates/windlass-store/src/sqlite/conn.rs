//! Connection access: one writer connection behind an async mutex, and the
//! connections reads use.
//!
//! All writes of the process go through a single connection, so concurrent
//! saves queue on a tokio mutex (a cheap in-process wait, in arrival order,
//! that parks the task rather than the runtime thread) instead of racing for
//! SQLite's file lock and sleeping in its busy handler (1, 2, 5 … 100 ms
//! back-off steps: that was the whole p99 tail).
//!
//! SQLite runs without sqlx's thread per connection (every statement a
//! channel round trip and two thread wake-ups). Reads run synchronously on
//! the thread that holds a reader; they are short and never wait for the
//! disk's writeback. Saves run on the save thread (`save_thread.rs`), other
//! writes on a blocking-pool thread that takes the writer's guard along
//! (see `write.rs` for why not inline).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use rusqlite::Connection;
use tokio::sync::{Mutex, MutexGuard};
use windlass_engine::StoreError;

use super::checkpoint::Checkpointer;
use crate::codec::backend;

/// The writer connection.
#[derive(Debug)]
pub(super) struct Writer {
    /// `None` once the store is closed.
    conn: Option<Connection>,
    /// Checkpoints the WAL once it holds enough frames (file databases
    /// only).
    checkpoints: Option<Checkpointer>,
    /// Frames in the WAL after the last commit, as SQLite's WAL hook
    /// reports them (a commit that rewound the log reports only its own).
    frames: Arc<AtomicU32>,
    /// A commit leaving at least this many frames asks for a checkpoint.
    checkpoint_frames: u32,
}

impl Writer {
    /// Prepares `conn` (migrated) for writing. With `checkpoints`, a
    /// checkpoint is asked for whenever a commit leaves `checkpoint_bytes`
    /// or more of frames in the WAL (0: after every commit).
    pub(super) fn open(
        mut conn: Connection,
        checkpoints: Option<Checkpointer>,
        checkpoint_bytes: u64,
    ) -> Result<Writer, StoreError> {
        let frames = Arc::new(AtomicU32::new(0));
        let seen = frames.clone();
        // Replaces SQLite's automatic checkpoint hook (already off, see
        // `checkpoint.rs`): it only records how long the log is.
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages| {
            seen.store(u32::try_from(pages).unwrap_or(0), Ordering::Relaxed);
            Ok(())
        }))
        .map_err(backend)?;
        let page: i64 = conn
            .query_row("PRAGMA page_size", [], |row| row.get(0))
            .map_err(backend)?;
        let page = u64::try_from(page).unwrap_or(4096);
        // A frame is a page and its 24-byte header.
        let checkpoint_frames = u32::try_from(checkpoint_bytes / (page + 24)).unwrap_or(u32::MAX);
        Ok(Writer {
            conn: Some(conn),
            checkpoints,
            frames,
            checkpoint_frames,
        })
    }

    /// Frames in the WAL after the last commit (for timings).
    pub(super) fn wal_frames(&self) -> u32 {
        self.frames.load(Ordering::Relaxed)
    }

    pub(super) fn conn(&mut self) -> Result<&mut Connection, StoreError> {
        self.conn.as_mut().ok_or_else(closed)
    }

    /// To call after each commit: asks for a checkpoint once the WAL is
    /// long enough. Not checkpointing after every commit is what keeps the
    /// rewinds of the WAL rare: the first commit after a checkpoint that
    /// copied every frame starts the log over and syncs its new header, on
    /// the save path (BENCHMARKS.md, "Latency").
    pub(super) fn committed(&self) {
        if let Some(c) = &self.checkpoints {
            if self.wal_frames() >= self.checkpoint_frames {
                c.committed();
            }
        }
    }

    /// The checkpointer, for closing it before the writer: commits after
    /// this no longer ask for checkpoints.
    pub(super) fn take_checkpoints(&mut self) -> Option<Checkpointer> {
        self.checkpoints.take()
    }

    pub(super) async fn close(&mut self) {
        if let Some(c) = self.checkpoints.take() {
            c.close().await;
        }
        if let Some(conn) = self.conn.take() {
            // Closing the last connection checkpoints the WAL into the main
            // file (milliseconds of I/O: not on a runtime thread). A failure
            // leaves a WAL file SQLite replays on the next open.
            let closed = tokio::task::spawn_blocking(move || conn.close().map_err(|(_, e)| e));
            match closed.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "closing the SQLite writer failed"),
                Err(e) => tracing::warn!(error = %e, "closing the SQLite writer failed"),
            }
        }
    }
}

pub(super) fn closed() -> StoreError {
    StoreError::Backend("the store is closed".into())
}

/// Read connections of a file database (WAL lets them read while the writer
/// writes). A read holds one for a single short query or read transaction,
/// run inline (unlike the writes): a context load of a 100-deep chain is one
/// query of ~0.5 ms here, acceptable on a runtime thread.
#[derive(Debug)]
pub(super) struct ReaderPool {
    /// `None` once the store is closed.
    slots: Vec<Mutex<Option<Connection>>>,
    /// Where a read waits when every connection is in use.
    next: AtomicUsize,
}

impl ReaderPool {
    pub(super) fn new(conns: Vec<Connection>) -> ReaderPool {
        ReaderPool {
            slots: conns.into_iter().map(|c| Mutex::new(Some(c))).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// A free connection, or (all busy) a turn on one of them, awaited.
    async fn acquire(&self) -> Result<MutexGuard<'_, Option<Connection>>, StoreError> {
        for slot in &self.slots {
            if let Ok(guard) = slot.try_lock() {
                return Ok(guard);
            }
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len().max(1);
        match self.slots.get(n) {
            Some(slot) => Ok(slot.lock().await),
            None => Err(closed()),
        }
    }

    /// Waits for reads in progress, then closes every connection.
    async fn close(&self) {
        for slot in &self.slots {
            drop(slot.lock().await.take());
        }
    }
}

/// Where reads run.
#[derive(Debug)]
pub(super) enum Readers {
    /// A file database.
    Pool(ReaderPool),
    /// A private in-memory database exists only on its one connection, so
    /// reads share the writer.
    Writer,
}

/// A connection to read on, from either source.
pub(super) enum ReadConn<'a> {
    Pooled(MutexGuard<'a, Option<Connection>>),
    Shared(MutexGuard<'a, Writer>),
}

impl Readers {
    pub(super) async fn acquire<'a>(
        &'a self,
        writer: &'a Mutex<Writer>,
    ) -> Result<ReadConn<'a>, StoreError> {
        match self {
            Readers::Pool(pool) => pool.acquire().await.map(ReadConn::Pooled),
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
    pub(super) fn conn(&mut self) -> Result<&mut Connection, StoreError> {
        match self {
            ReadConn::Pooled(c) => c.as_mut().ok_or_else(closed),
            ReadConn::Shared(w) => w.conn(),
        }
    }
}

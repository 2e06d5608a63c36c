//! Group commit: saves that queue while the writer is busy are committed
//! together, in one transaction, by whoever holds the writer next.
//!
//! A save puts its encoded row on a queue and waits for its own result. If
//! no flush is under way it starts one: a blocking-pool thread that takes
//! the writer and commits everything queued, again and again until the
//! queue is empty. A save never waits for a group to fill (no timer): a lone
//! save is committed at once, on its own, exactly as before; only saves that
//! would have queued on the writer anyway share a commit. Each save is still
//! committed before its caller hears "saved" (so before the terminal event).
//!
//! What a shared commit saves: the WAL frames of the pages every save
//! touches (the tables' and indexes' rightmost leaves) are written once per
//! group instead of once per save, and one thread hop serves the group.
//! Inside the group each save runs under its own savepoint, so a duplicate
//! id fails that save only.

use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{params, Connection};
use tokio::sync::oneshot;
use windlass_engine::StoreError;

use super::conn::Writer;
use super::write::SAVE;
use crate::codec::{backend, is_unique_violation};

/// One save, encoded, ready for the writer.
#[derive(Debug)]
pub(super) struct SaveRow {
    pub id: String,
    pub created_at: i64,
    pub previous: Option<String>,
    pub body: String,
    pub items: String,
    pub tenant: String,
    pub trace: Option<String>,
}

type Done = oneshot::Sender<Result<(), StoreError>>;

#[derive(Debug, Default)]
struct Queue {
    rows: Vec<(SaveRow, Done)>,
    /// A flush is running (it will see rows queued meanwhile).
    flushing: bool,
}

/// Saves waiting for the writer.
#[derive(Debug, Default)]
pub(super) struct SaveQueue {
    queue: Mutex<Queue>,
}

impl SaveQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `row` and waits until it is committed (or refused).
    pub(super) async fn save(
        self: &Arc<Self>,
        writer: &Arc<tokio::sync::Mutex<Writer>>,
        row: SaveRow,
    ) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut q = self.lock();
            q.rows.push((row, tx));
            !std::mem::replace(&mut q.flushing, true)
        };
        if start {
            // Detached: queued saves are committed even if this caller
            // stops waiting.
            tokio::spawn(flush(self.clone(), writer.clone()));
        }
        rx.await
            .map_err(|_| StoreError::Backend("the save was dropped by the writer".into()))?
    }
}

/// Clears `flushing` if the flush ends abnormally (a panic, a shutdown), so
/// a later save starts a new one instead of waiting forever.
struct Flushing {
    queue: Arc<SaveQueue>,
    armed: bool,
}

impl Flushing {
    /// The flush ended normally (and cleared the flag itself).
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Flushing {
    fn drop(&mut self) {
        if self.armed {
            self.queue.lock().flushing = false;
        }
    }
}

async fn flush(queue: Arc<SaveQueue>, writer: Arc<tokio::sync::Mutex<Writer>>) {
    let mut flushing = Flushing { queue, armed: true };
    let mut guard = writer.lock_owned().await;
    let ran = tokio::task::spawn_blocking(move || loop {
        let rows = {
            let mut q = flushing.queue.lock();
            if q.rows.is_empty() {
                // Cleared under the same lock a save checks it with; from
                // here on a new save starts a new flush.
                q.flushing = false;
                drop(q);
                flushing.disarm();
                return;
            }
            std::mem::take(&mut q.rows)
        };
        let results = match guard.conn() {
            Ok(conn) => commit(conn, rows.iter().map(|(r, _)| r)),
            Err(e) => rows.iter().map(|_| Err(clone_err(&e))).collect(),
        };
        if results.iter().any(Result::is_ok) {
            guard.committed();
        }
        for ((_, done), result) in rows.into_iter().zip(results) {
            let _ = done.send(result);
        }
    })
    .await;
    if let Err(e) = ran {
        tracing::error!(error = %e, "the SQLite save task failed");
    }
}

/// Commits `rows`: alone as one autocommit statement, or several in one
/// transaction with a savepoint each. One result per row, in order.
pub(super) fn commit<'a>(
    conn: &mut Connection,
    rows: impl ExactSizeIterator<Item = &'a SaveRow>,
) -> Vec<Result<(), StoreError>> {
    if rows.len() == 1 {
        return rows.map(|r| insert(conn, r)).collect();
    }
    let n = rows.len();
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let e = backend(e);
        return (0..n).map(|_| Err(clone_err(&e))).collect();
    }
    let results: Vec<_> = rows.map(|r| insert_in_savepoint(conn, r)).collect();
    match conn.execute_batch("COMMIT") {
        Ok(()) => results,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            let e = backend(e);
            (0..n).map(|_| Err(clone_err(&e))).collect()
        }
    }
}

fn insert_in_savepoint(conn: &Connection, row: &SaveRow) -> Result<(), StoreError> {
    conn.execute_batch("SAVEPOINT save").map_err(backend)?;
    let result = insert(conn, row);
    let end = if result.is_ok() {
        "RELEASE save"
    } else {
        "ROLLBACK TO save; RELEASE save"
    };
    conn.execute_batch(end).map_err(backend)?;
    result
}

fn insert(conn: &Connection, r: &SaveRow) -> Result<(), StoreError> {
    conn.prepare_cached(SAVE)
        .and_then(|mut stmt| {
            stmt.execute(params![
                r.id,
                r.created_at,
                r.previous,
                r.body,
                r.items,
                r.tenant,
                r.trace
            ])
        })
        .map(drop)
        .map_err(|e| match is_unique_violation(&e) {
            true => StoreError::Duplicate(r.id.clone()),
            false => backend(e),
        })
}

fn clone_err(e: &StoreError) -> StoreError {
    match e {
        StoreError::Backend(m) => StoreError::Backend(m.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

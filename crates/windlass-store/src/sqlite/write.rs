//! Writes: saving a response with its item references, and deleting one.
//!
//! Every write runs on the single writer connection (see `conn.rs`), on a
//! blocking-pool thread that takes the writer's guard along. Reads run
//! inline (see `read.rs`); writes do not, because a commit can wait for the
//! disk (the WAL header fsync after a checkpoint, writeback of WAL pages),
//! and inline that wait stalled a runtime worker and every task queued on
//! it: measured, ~12 % less CPU per stored request inline, but +0.25-0.5 ms
//! on the median latency at 16 clients (docs/benchmarks-history.md, "SQLite inline").
//!
//! A save is one transaction of plain prepared statements (`group.rs`,
//! `save_sql.rs` says why not one statement into a trigger any more), run to
//! its end by the thread that took it even if the caller stops waiting, so
//! a cancelled save never leaves a transaction open.
//!
//! By default saves are committed by the save thread instead, where saves
//! queued together share a commit (`save_thread.rs`, `group.rs`;
//! `SqliteOptions::group_commit`).

use rusqlite::{params, Connection, TransactionBehavior};
use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};
use windlass_engine::{NewResponse, StoreError};

use super::conn::Writer;
use super::group::{commit, ItemRow, SaveRow};
use super::save_thread::Saves;
use super::sections::{HISTORY, INPUT, OUTPUT};
use super::trace;
use crate::codec::{backend, encode_item, encode_resource};

/// Saves the response row, its input and output items and its trace. All
/// or nothing. With `group`, saves queued meanwhile share a commit
/// (`group.rs`); without, each is its own statement on the writer.
pub(super) async fn save(
    writer: &Arc<Mutex<Writer>>,
    saves: &Saves,
    new: NewResponse<'_>,
) -> Result<(), StoreError> {
    let resource = new.response;
    // Encoding happens before taking the writer, so writers queue only for
    // the database work.
    let row = SaveRow {
        body: encode_resource(resource)?,
        items: encode_rows(new)?,
        created_at: i64::try_from(resource.created_at).unwrap_or(i64::MAX),
        id: resource.id.clone(),
        previous: resource.previous_response_id.clone(),
        tenant: new.tenant.to_owned(),
        trace: new.trace.map(trace::encode).transpose()?,
    };
    match saves {
        Saves::Thread(thread) => thread.save(row).await,
        Saves::PerSave => {
            on_writer(writer, move |conn| {
                commit(conn, std::iter::once(&row))
                    .pop()
                    .unwrap_or_else(|| Err(StoreError::Backend("the save got no result".into())))
            })
            .await
        }
    }
}

/// Runs `write` on the writer connection, on a blocking-pool thread; a
/// successful write counts as a commit for the checkpointer.
pub(super) async fn on_writer<T, F>(writer: &Arc<Mutex<Writer>>, write: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
{
    let mut guard: OwnedMutexGuard<Writer> = writer.clone().lock_owned().await;
    tokio::task::spawn_blocking(move || {
        let out = write(guard.conn()?)?;
        guard.committed();
        Ok(out)
    })
    .await
    .map_err(|e| StoreError::Backend(format!("write task: {e}")))?
}

/// The save's items: input then output, each with its place and its JSON.
fn encode_rows(new: NewResponse<'_>) -> Result<Vec<ItemRow>, StoreError> {
    let sections = [(INPUT, new.input), (OUTPUT, &new.response.output[..])];
    let mut rows = Vec::with_capacity(new.input.len() + new.response.output.len());
    for (section, items) in sections {
        for (position, item) in (0..).zip(items) {
            rows.push(ItemRow {
                section,
                position,
                public_id: item.id().map(str::to_owned),
                body: encode_item(item)?,
            });
        }
    }
    Ok(rows)
}

/// Deletes a response and its references, then the items nothing references
/// any more. Successors keep working: each response continuing from this one
/// first takes over its references (as history rows placed before its own)
/// and its predecessor, so its transcript stays the same.
pub(super) async fn delete(
    writer: &Arc<Mutex<Writer>>,
    tenant: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let (tenant, id) = (tenant.to_owned(), id.to_owned());
    on_writer(writer, move |conn| {
        delete_in(conn, &tenant, &id).map_err(backend)
    })
    .await
}

fn delete_in(conn: &mut Connection, tenant: &str, id: &str) -> Result<bool, rusqlite::Error> {
    // Rolled back when dropped on an error.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let owned = tx
        .prepare_cached("SELECT 1 FROM responses WHERE id = ?1 AND tenant = ?2")?
        .exists(params![id, tenant])?;
    if !owned {
        // Not stored, but maybe live (a background response that never
        // ended): its row and stream events go.
        tx.prepare_cached("DELETE FROM response_events WHERE response_id = ?1 AND tenant = ?2")?
            .execute(params![id, tenant])?;
        let live = tx
            .prepare_cached("DELETE FROM live_runs WHERE id = ?1 AND tenant = ?2")?
            .execute(params![id, tenant])?;
        tx.commit()?;
        return Ok(live > 0);
    }
    delete_owned(&tx, id)?;
    tx.commit()?;
    Ok(true)
}

/// Deletes response `id` (known to exist) inside the caller's transaction.
pub(super) fn delete_owned(tx: &Connection, id: &str) -> Result<(), rusqlite::Error> {
    // Successors' existing history rows (from an earlier delete) start at
    // their minimum position; this response's rows go right before them.
    tx.prepare_cached(
        "INSERT INTO response_items (response_id, section, position, item_key) \
         SELECT c.id, ?2, \
                (SELECT IFNULL(MIN(x.position), 0) FROM response_items x \
                 WHERE x.response_id = c.id AND x.section = ?2) \
                - (SELECT COUNT(*) FROM response_items WHERE response_id = ?1) \
                + ROW_NUMBER() OVER (PARTITION BY c.id ORDER BY r.section, r.position) - 1, \
                r.item_key \
         FROM responses c JOIN response_items r ON r.response_id = ?1 \
         WHERE c.history_parent = ?1",
    )?
    .execute(params![id, HISTORY])?;
    tx.prepare_cached(
        "UPDATE responses SET history_parent = \
         (SELECT p.history_parent FROM responses p WHERE p.id = ?1) \
         WHERE history_parent = ?1",
    )?
    .execute([id])?;

    // Items only this response references. Runs before the references go
    // (the foreign key from references to items is deferred to commit), so
    // only this response's own items are examined, not the whole table.
    tx.prepare_cached(
        "DELETE FROM items \
         WHERE key IN (SELECT item_key FROM response_items WHERE response_id = ?1) \
           AND NOT EXISTS (SELECT 1 FROM response_items r \
                           WHERE r.item_key = items.key AND r.response_id <> ?1)",
    )?
    .execute([id])?;

    tx.prepare_cached("DELETE FROM response_items WHERE response_id = ?")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM response_events WHERE response_id = ?")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM live_runs WHERE id = ?")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM responses WHERE id = ?")?
        .execute([id])?;
    Ok(())
}

//! Retention: deleting responses older than a cutoff, and conversations
//! idle since before one.
//!
//! Newest first, in batches of one transaction each: a pruned response's
//! successors that are pruned too are gone already, so only the surviving
//! ones inherit its references (as `delete` does), and the history copied
//! never exceeds what survives. Batches keep the writer free for saves in
//! between.

use std::sync::Arc;

use rusqlite::{params, Connection, TransactionBehavior};
use tokio::sync::Mutex;
use windlass_engine::StoreError;

use super::conn::Writer;
use super::write::{delete_owned, on_writer};
use crate::codec::backend;

/// Responses deleted per transaction.
const BATCH: i64 = 256;

pub(super) async fn prune(
    writer: &Arc<Mutex<Writer>>,
    created_before: u64,
) -> Result<u64, StoreError> {
    let cutoff = i64::try_from(created_before).unwrap_or(i64::MAX);
    let mut total = 0;
    loop {
        let n = on_writer(writer, move |conn| batch(conn, cutoff).map_err(backend)).await?;
        total += n;
        if n < BATCH as u64 {
            return Ok(total);
        }
    }
}

fn batch(conn: &mut Connection, cutoff: i64) -> Result<u64, rusqlite::Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT id FROM responses WHERE created_at < ?1 \
             ORDER BY created_at DESC, rowid DESC LIMIT ?2",
        )?
        .query_map(params![cutoff, BATCH], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in &ids {
        delete_owned(&tx, id)?;
    }
    tx.commit()?;
    Ok(ids.len() as u64)
}

/// Deletes the conversations last used before `active_before`, with their
/// items, in batches of one transaction each.
pub(super) async fn prune_conversations(
    writer: &Arc<Mutex<Writer>>,
    active_before: u64,
) -> Result<u64, StoreError> {
    let cutoff = i64::try_from(active_before).unwrap_or(i64::MAX);
    let mut total = 0;
    loop {
        let n = on_writer(writer, move |conn| {
            conversation_batch(conn, cutoff).map_err(backend)
        })
        .await?;
        total += n;
        if n < BATCH as u64 {
            return Ok(total);
        }
    }
}

fn conversation_batch(conn: &mut Connection, cutoff: i64) -> Result<u64, rusqlite::Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT id FROM conversations WHERE updated_at < ?1 ORDER BY updated_at LIMIT ?2",
        )?
        .query_map(params![cutoff, BATCH], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in &ids {
        tx.prepare_cached("DELETE FROM conversation_items WHERE conversation_id = ?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM conversations WHERE id = ?1")?
            .execute([id])?;
    }
    tx.commit()?;
    Ok(ids.len() as u64)
}

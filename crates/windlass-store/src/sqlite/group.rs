//! Group commit: the saves queued together are committed in one
//! transaction, each under its own savepoint, so a duplicate id fails that
//! save only. The save thread (`save_thread.rs`) forms the groups.
//!
//! What a shared commit saves: the WAL frames of the pages every save
//! touches (the tables' and indexes' rightmost leaves) are written once per
//! group instead of once per save.

use rusqlite::{params, Connection};
use windlass_engine::StoreError;

use super::save_sql::SAVE;
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

pub(super) fn clone_err(e: &StoreError) -> StoreError {
    match e {
        StoreError::Backend(m) => StoreError::Backend(m.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

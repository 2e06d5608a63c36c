//! Group commit: the saves queued together are committed in one
//! transaction, each under its own savepoint, so a duplicate id fails that
//! save only. The save thread (`save_thread.rs`) forms the groups; a save
//! outside it is a group of one.
//!
//! What a shared commit saves: the WAL frames of the pages every save
//! touches (the tables' and indexes' rightmost leaves) are written once per
//! group instead of once per save.

use rusqlite::{params, Connection};
use windlass_engine::StoreError;

use super::save_sql::{END_LIVE_RUN, INSERT_ITEM, INSERT_REFERENCE, INSERT_RESPONSE};
use crate::codec::{backend, is_unique_violation};

/// One save, encoded, ready for the writer.
#[derive(Debug)]
pub(super) struct SaveRow {
    pub id: String,
    pub created_at: i64,
    pub previous: Option<String>,
    pub body: String,
    /// Input then output, in order.
    pub items: Vec<ItemRow>,
    pub tenant: String,
    pub trace: Option<String>,
}

/// One item of a save: where the response references it, and its JSON.
#[derive(Debug)]
pub(super) struct ItemRow {
    pub section: i64,
    pub position: i64,
    pub public_id: Option<String>,
    pub body: String,
}

/// Commits `rows` in one transaction, each of several under its own
/// savepoint. One result per row, in order.
pub(super) fn commit<'a>(
    conn: &mut Connection,
    rows: impl ExactSizeIterator<Item = &'a SaveRow>,
) -> Vec<Result<(), StoreError>> {
    let n = rows.len();
    let fail_all = |e: StoreError| (0..n).map(|_| Err(clone_err(&e))).collect();
    if let Err(e) = run(conn, "BEGIN IMMEDIATE") {
        return fail_all(e);
    }
    let mut results = Vec::with_capacity(n);
    for row in rows {
        // A lone row needs no savepoint: its failure rolls back the whole
        // transaction, which is only its own.
        let written = match n {
            1 => Ok(insert(conn, row)),
            _ => insert_in_savepoint(conn, row),
        };
        match written {
            // Some errors (a full disk, I/O) make SQLite roll the whole
            // transaction back itself: none of the group is kept.
            Ok(Err(e)) if conn.is_autocommit() => return fail_all(e),
            Ok(result) => results.push(result),
            // A savepoint that cannot be undone leaves the transaction
            // unknown: none of it is kept.
            Err(e) => {
                let _ = run(conn, "ROLLBACK");
                return fail_all(e);
            }
        }
    }
    let end = match results.iter().any(Result::is_ok) {
        true => "COMMIT",
        false => "ROLLBACK",
    };
    match run(conn, end) {
        Ok(()) => results,
        Err(e) => {
            // Its own error is not reported: the rows get the commit's, and
            // the transaction is over either way.
            let _ = run(conn, "ROLLBACK");
            fail_all(e)
        }
    }
}

/// Runs a statement without parameters, cached: every save runs the same
/// few, and parsing them anew each time cost more than running them.
fn run(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute([]))
        .map(drop)
        .map_err(backend)
}

/// The row's own result inside; an error outside means the savepoint
/// could not be rolled back or released.
fn insert_in_savepoint(
    conn: &Connection,
    row: &SaveRow,
) -> Result<Result<(), StoreError>, StoreError> {
    run(conn, "SAVEPOINT save")?;
    let result = insert(conn, row);
    if result.is_err() {
        run(conn, "ROLLBACK TO save")?;
    }
    run(conn, "RELEASE save")?;
    Ok(result)
}

/// The save's statements, inside the caller's transaction or savepoint; on
/// an error the caller rolls them back.
fn insert(conn: &Connection, r: &SaveRow) -> Result<(), StoreError> {
    conn.prepare_cached(INSERT_RESPONSE)
        .and_then(|mut stmt| {
            stmt.execute(params![
                r.id,
                r.created_at,
                r.previous,
                r.body,
                r.tenant,
                r.trace
            ])
        })
        .map_err(|e| match is_unique_violation(&e) {
            true => StoreError::Duplicate(r.id.clone()),
            false => backend(e),
        })?;
    insert_items(conn, r).map_err(backend)?;
    conn.prepare_cached(END_LIVE_RUN)
        .and_then(|mut stmt| stmt.execute([&r.id]))
        .map_err(backend)?;
    Ok(())
}

fn insert_items(conn: &Connection, r: &SaveRow) -> Result<(), rusqlite::Error> {
    let mut item = conn.prepare_cached(INSERT_ITEM)?;
    let mut reference = conn.prepare_cached(INSERT_REFERENCE)?;
    for it in &r.items {
        item.execute(params![it.public_id, it.body, r.tenant])?;
        let key = conn.last_insert_rowid();
        reference.execute(params![r.id, it.section, it.position, key])?;
    }
    Ok(())
}

pub(super) fn clone_err(e: &StoreError) -> StoreError {
    match e {
        StoreError::Backend(m) => StoreError::Backend(m.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

//! Reads: resources, contexts, input pages and single items.
//!
//! Each runs synchronously on the caller's thread (see `conn.rs`) and
//! decodes rows straight from SQLite's buffers, without copying them into
//! owned strings first.

use rusqlite::{params, Connection, OptionalExtension, Row, Rows};
use windlass_engine::{ItemPage, PageRequest, SortOrder, StoreError};
use windlass_protocol::{Item, ResponseResource};

use super::sections::{INPUT, OUTPUT};
use crate::codec::{backend, decode_item, decode_resource};

/// The resource with its output items put back.
pub(super) fn get(
    conn: &mut Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<ResponseResource>, StoreError> {
    // One read transaction: the resource and its output from the same snapshot.
    let tx = conn.transaction().map_err(backend)?;
    let body: Option<String> = tx
        .prepare_cached("SELECT body FROM responses WHERE id = ? AND tenant = ?")
        .and_then(|mut s| s.query_row([id, tenant], |r| r.get(0)).optional())
        .map_err(backend)?;
    let Some(body) = body else {
        return Ok(None);
    };
    let mut stmt = tx
        .prepare_cached(
            "SELECT i.body FROM response_items r JOIN items i ON i.key = r.item_key \
             WHERE r.response_id = ? AND r.section = ? ORDER BY r.position",
        )
        .map_err(backend)?;
    let output = items(stmt.query(params![id, OUTPUT]).map_err(backend)?)?;
    decode_resource(&body, output).map(Some)
}

/// History, input and output in one query. A response's references hold
/// only its own items (plus history rows inherited when a predecessor was
/// deleted); the rest of its history is its `history_parent`'s transcript,
/// so the query walks the chain up and reads each response's references,
/// oldest response first. Each step is a primary-key lookup and each
/// response's references one range scan of the primary key.
///
/// The outer joins tell "unknown" (no row) from "empty" (one NULL row).
/// Only the first response's tenant is checked: a chain never crosses
/// tenants (a save links a predecessor of its own tenant only).
///
/// Runs inline like every read: ~0.5 ms for a 100-deep chain, most of it
/// decoding the items' JSON, which would cost the same on any thread.
pub(super) fn load_context(
    conn: &mut Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<Vec<Item>>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "WITH RECURSIVE chain (id, depth) AS ( \
                 SELECT id, 0 FROM responses WHERE id = ?1 AND tenant = ?3 \
                 UNION ALL \
                 SELECT p.history_parent, c.depth + 1 FROM chain c \
                 JOIN responses p ON p.id = c.id \
                 WHERE p.history_parent IS NOT NULL AND c.depth < ?2) \
             SELECT i.body FROM chain c \
             LEFT JOIN response_items r ON r.response_id = c.id \
             LEFT JOIN items i ON i.key = r.item_key \
             ORDER BY c.depth DESC, r.section, r.position",
        )
        .map_err(backend)?;
    let (out, rows) = decode_rows(
        stmt.query(params![id, MAX_DEPTH, tenant])
            .map_err(backend)?,
    )?;
    Ok((rows > 0).then_some(out))
}

/// Chains cannot loop (a response only names an existing, hence older,
/// response as its parent), but a damaged file could; this bounds the walk.
const MAX_DEPTH: i64 = 1_000_000;

/// A page of the response's own input, OpenAI style: `after` is an item id,
/// and the page holds the items that follow it in the requested order.
pub(super) fn input_items(
    conn: &mut Connection,
    tenant: &str,
    id: &str,
    page: &PageRequest,
) -> Result<Option<ItemPage>, StoreError> {
    let (cmp, dir, start) = match page.order {
        SortOrder::Asc => (">", "ASC", -1),
        SortOrder::Desc => ("<", "DESC", i64::MAX),
    };
    let tx = conn.transaction().map_err(backend)?;

    let exists: Option<i64> = tx
        .prepare_cached("SELECT 1 FROM responses WHERE id = ? AND tenant = ?")
        .and_then(|mut s| s.query_row([id, tenant], |r| r.get(0)).optional())
        .map_err(backend)?;
    if exists.is_none() {
        return Ok(None);
    }

    let bound = match &page.after {
        None => start,
        // Should an id repeat within one input, the cursor is its first
        // occurrence in the requested order, as a client walking pages sees.
        Some(after) => tx
            .prepare_cached(&format!(
                "SELECT r.position FROM response_items r JOIN items i ON i.key = r.item_key \
                 WHERE r.response_id = ? AND r.section = ? AND i.public_id = ? \
                 ORDER BY r.position {dir} LIMIT 1"
            ))
            .and_then(|mut s| {
                s.query_row(params![id, INPUT, after], |r| r.get(0))
                    .optional()
            })
            .map_err(backend)?
            .ok_or_else(|| StoreError::UnknownCursor(after.clone()))?,
    };

    // One extra row tells whether another page follows.
    let fetch = i64::try_from(page.limit)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let mut stmt = tx
        .prepare_cached(&format!(
            "SELECT i.body FROM response_items r JOIN items i ON i.key = r.item_key \
             WHERE r.response_id = ? AND r.section = ? AND r.position {cmp} ? \
             ORDER BY r.position {dir} LIMIT ?"
        ))
        .map_err(backend)?;
    let mut items = items(
        stmt.query(params![id, INPUT, bound, fetch])
            .map_err(backend)?,
    )?;

    let has_more = items.len() > page.limit;
    items.truncate(page.limit);
    Ok(Some(ItemPage { items, has_more }))
}

/// The highest key is the most recently stored item with that public id.
pub(super) fn find_item(
    conn: &mut Connection,
    tenant: &str,
    item_id: &str,
) -> Result<Option<Item>, StoreError> {
    let body: Option<String> = conn
        .prepare_cached(
            "SELECT body FROM items WHERE public_id = ? AND tenant = ? \
             ORDER BY key DESC LIMIT 1",
        )
        .and_then(|mut s| s.query_row([item_id, tenant], |r| r.get(0)).optional())
        .map_err(backend)?;
    body.as_deref().map(decode_item).transpose()
}

/// The connection answers a query.
pub(super) fn ping(conn: &mut Connection) -> Result<(), StoreError> {
    conn.prepare_cached("SELECT 1")
        .and_then(|mut s| s.query_row([], |_| Ok(())))
        .map_err(backend)
}

/// Decodes the items of a one-column result of item bodies.
fn items(rows: Rows<'_>) -> Result<Vec<Item>, StoreError> {
    decode_rows(rows).map(|(items, _)| items)
}

/// The items of a one-column result of item bodies (NULL rows skipped),
/// and how many rows there were.
fn decode_rows(mut rows: Rows<'_>) -> Result<(Vec<Item>, usize), StoreError> {
    let (mut out, mut seen) = (Vec::new(), 0);
    while let Some(row) = rows.next().map_err(backend)? {
        seen += 1;
        if let Some(body) = text(row)? {
            out.push(decode_item(body)?);
        }
    }
    Ok((out, seen))
}

/// The first column as text borrowed from SQLite, `None` for NULL.
fn text<'r>(row: &'r Row<'_>) -> Result<Option<&'r str>, StoreError> {
    let value = row.get_ref(0).map_err(backend)?;
    value
        .as_str_or_null()
        .map_err(|e| StoreError::Corrupt(format!("item body: {e}")))
}

//! Reads: resources, contexts, input pages and single items.

use sqlx::{Connection, SqliteConnection};
use windlass_engine::{ItemPage, PageRequest, SortOrder, StoreError};
use windlass_protocol::{Item, ResponseResource};

use super::{INPUT, OUTPUT};
use crate::codec::{backend, decode_item, decode_resource};

/// The resource with its output items put back.
pub(super) async fn get(
    conn: &mut SqliteConnection,
    id: &str,
) -> Result<Option<ResponseResource>, StoreError> {
    // One read transaction: the resource and its output from the same snapshot.
    let mut tx = conn.begin().await.map_err(backend)?;
    let body: Option<String> = sqlx::query_scalar("SELECT body FROM responses WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend)?;
    let Some(body) = body else {
        return Ok(None);
    };
    let output: Vec<String> = sqlx::query_scalar(
        "SELECT i.body FROM response_items r JOIN items i ON i.key = r.item_key \
         WHERE r.response_id = ? AND r.section = ? ORDER BY r.position",
    )
    .bind(id)
    .bind(OUTPUT)
    .fetch_all(&mut *tx)
    .await
    .map_err(backend)?;
    tx.commit().await.map_err(backend)?;

    let output = output
        .iter()
        .map(|b| decode_item(b))
        .collect::<Result<_, _>>()?;
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
pub(super) async fn load_context(
    conn: &mut SqliteConnection,
    id: &str,
) -> Result<Option<Vec<Item>>, StoreError> {
    let rows: Vec<Option<String>> = sqlx::query_scalar(
        "WITH RECURSIVE chain (id, depth) AS ( \
             SELECT id, 0 FROM responses WHERE id = ?1 \
             UNION ALL \
             SELECT p.history_parent, c.depth + 1 FROM chain c \
             JOIN responses p ON p.id = c.id \
             WHERE p.history_parent IS NOT NULL AND c.depth < ?2) \
         SELECT i.body FROM chain c \
         LEFT JOIN response_items r ON r.response_id = c.id \
         LEFT JOIN items i ON i.key = r.item_key \
         ORDER BY c.depth DESC, r.section, r.position",
    )
    .bind(id)
    .bind(MAX_DEPTH)
    .fetch_all(&mut *conn)
    .await
    .map_err(backend)?;
    if rows.is_empty() {
        return Ok(None);
    }
    rows.iter()
        .flatten()
        .map(|b| decode_item(b))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Chains cannot loop (a response only names an existing, hence older,
/// response as its parent), but a damaged file could; this bounds the walk.
const MAX_DEPTH: i64 = 1_000_000;

/// A page of the response's own input, OpenAI style: `after` is an item id,
/// and the page holds the items that follow it in the requested order.
pub(super) async fn input_items(
    conn: &mut SqliteConnection,
    id: &str,
    page: &PageRequest,
) -> Result<Option<ItemPage>, StoreError> {
    let (cmp, dir, start) = match page.order {
        SortOrder::Asc => (">", "ASC", -1),
        SortOrder::Desc => ("<", "DESC", i64::MAX),
    };
    let mut tx = conn.begin().await.map_err(backend)?;

    let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM responses WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend)?;
    if exists.is_none() {
        return Ok(None);
    }

    let bound = match &page.after {
        None => start,
        // Should an id repeat within one input, the cursor is its first
        // occurrence in the requested order, as a client walking pages sees.
        Some(after) => sqlx::query_scalar(&format!(
            "SELECT r.position FROM response_items r JOIN items i ON i.key = r.item_key \
             WHERE r.response_id = ? AND r.section = ? AND i.public_id = ? \
             ORDER BY r.position {dir} LIMIT 1"
        ))
        .bind(id)
        .bind(INPUT)
        .bind(after)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend)?
        .ok_or_else(|| StoreError::UnknownCursor(after.clone()))?,
    };

    // One extra row tells whether another page follows.
    let fetch = i64::try_from(page.limit)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let mut bodies: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT i.body FROM response_items r JOIN items i ON i.key = r.item_key \
         WHERE r.response_id = ? AND r.section = ? AND r.position {cmp} ? \
         ORDER BY r.position {dir} LIMIT ?"
    ))
    .bind(id)
    .bind(INPUT)
    .bind(bound)
    .bind(fetch)
    .fetch_all(&mut *tx)
    .await
    .map_err(backend)?;
    tx.commit().await.map_err(backend)?;

    let has_more = bodies.len() > page.limit;
    bodies.truncate(page.limit);
    let items = bodies
        .iter()
        .map(|b| decode_item(b))
        .collect::<Result<_, _>>()?;
    Ok(Some(ItemPage { items, has_more }))
}

/// The highest key is the most recently stored item with that public id.
pub(super) async fn find_item(
    conn: &mut SqliteConnection,
    item_id: &str,
) -> Result<Option<Item>, StoreError> {
    let body: Option<String> =
        sqlx::query_scalar("SELECT body FROM items WHERE public_id = ? ORDER BY key DESC LIMIT 1")
            .bind(item_id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(backend)?;
    body.as_deref().map(decode_item).transpose()
}

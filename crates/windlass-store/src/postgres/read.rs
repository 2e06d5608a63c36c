//! Reads: resources, contexts, input pages, single items and traces. Each
//! is one query (one round trip) except input pages.

use deadpool_postgres::{ClientWrapper, Object};
use tokio_postgres::types::Type;
use windlass_engine::{ItemPage, PageRequest, SortOrder, StoreError, Trace};
use windlass_protocol::{Item, ResponseResource};

use super::error::backend;
use super::sections::{INPUT, OUTPUT};
use super::snapshot::read_snapshot;
use crate::codec::{decode_item, decode_resource};

/// The resource and its output items in one row (same snapshot).
pub(super) async fn get(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
) -> Result<Option<ResponseResource>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT r.body, ARRAY(SELECT i.body FROM response_items ri \
                                  JOIN items i ON i.key = ri.item_key \
                                  WHERE ri.response_id = r.id AND ri.section = $2 \
                                  ORDER BY ri.position) \
             FROM responses r WHERE r.id = $1 AND r.tenant = $3",
        )
        .await
        .map_err(backend)?;
    let Some(row) = conn
        .query_opt(&stmt, &[&id, &OUTPUT, &tenant])
        .await
        .map_err(backend)?
    else {
        return Ok(None);
    };
    let body: &str = row.try_get(0).map_err(backend)?;
    let output: Vec<&str> = row.try_get(1).map_err(backend)?;
    let output = output
        .into_iter()
        .map(decode_item)
        .collect::<Result<_, _>>()?;
    decode_resource(body, output).map(Some)
}

/// History, input and output in ONE query: walks the `history_parent`
/// chain up from `id`, then reads each response's references, oldest
/// response first. Only the first response's tenant is checked: a chain
/// never crosses tenants. No row means "unknown"; a response without items
/// gives an empty array.
///
/// Each step follows the parent through a scalar subquery on the primary
/// key, and the walk ends at a NULL id, which the outer query drops. The
/// step must not say `history_parent IS NOT NULL`: that makes the partial
/// index `responses_by_history_parent` (`WHERE history_parent IS NOT NULL`)
/// usable, and where statistics were taken before any chain existed (a
/// young database analyzed by autovacuum) the planner expected one row in it
/// and scanned the whole index at every step, so a depth-100 load grew with
/// the number of responses continuing the chain (62 ms with ~800 siblings;
/// the chain bench fell from ~450 to ~90 requests/s).
const LOAD_CONTEXT: &str = "\
WITH RECURSIVE chain (id, depth) AS ( \
    SELECT id, 0 FROM responses WHERE id = $1 AND tenant = $3 \
    UNION ALL \
    SELECT (SELECT p.history_parent FROM responses p WHERE p.id = c.id), c.depth + 1 \
    FROM chain c WHERE c.id IS NOT NULL AND c.depth < $2) \
SELECT ARRAY(SELECT i.body FROM response_items r \
             JOIN items i ON i.key = r.item_key \
             WHERE r.response_id = c.id \
             ORDER BY r.section, r.position) \
FROM chain c WHERE c.id IS NOT NULL ORDER BY c.depth DESC";

/// [`LOAD_CONTEXT`], planned at every call (an unnamed statement, still one
/// round trip) rather than prepared once per connection. A prepared
/// statement's cached generic plan is made for the table sizes of its
/// first executions; made while the tables were small (a new database, or
/// one that grew faster than autovacuum re-analyzed it), this query's plan
/// scanned `responses` and `items` whole for every response of the chain,
/// so a depth-100 load grew with the table (50 ms with ~10k responses
/// stored after the plan was made). A fresh plan sees the tables' current
/// size and walks the keys. The items are read per response through a
/// correlated `ARRAY(...)` subquery (an index range on `response_items`).
pub(super) async fn load_context(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
) -> Result<Option<Vec<Item>>, StoreError> {
    let rows = conn
        .query_typed(
            LOAD_CONTEXT,
            &[
                (&id, Type::TEXT),
                (&MAX_DEPTH, Type::INT4),
                (&tenant, Type::TEXT),
            ],
        )
        .await
        .map_err(backend)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(rows.len() * 2);
    for row in &rows {
        let bodies: Vec<&str> = row.try_get(0).map_err(backend)?;
        for body in bodies {
            out.push(decode_item(body)?);
        }
    }
    Ok(Some(out))
}

/// Chains cannot loop (a parent always exists before its successor), but a
/// damaged database could; this bounds the walk.
const MAX_DEPTH: i32 = 1_000_000;

/// A page of the response's own input, OpenAI style: `after` is an item id,
/// and the page holds the items that follow it in the requested order.
pub(super) async fn input_items(
    conn: &mut Object,
    tenant: &str,
    id: &str,
    page: &PageRequest,
) -> Result<Option<ItemPage>, StoreError> {
    let (cmp, dir, start) = match page.order {
        SortOrder::Asc => (">", "ASC", -1),
        SortOrder::Desc => ("<", "DESC", i32::MAX),
    };
    // One snapshot for the existence check, the cursor and the page.
    let tx = read_snapshot(conn).await?;
    let exists = tx
        .query_opt(
            "SELECT 1 FROM responses WHERE id = $1 AND tenant = $2",
            &[&id, &tenant],
        )
        .await
        .map_err(backend)?;
    if exists.is_none() {
        return Ok(None);
    }
    let bound: i32 = match &page.after {
        None => start,
        // Should an id repeat within one input, the cursor is its first
        // occurrence in the requested order, as a client walking pages sees.
        Some(after) => tx
            .query_opt(
                &format!(
                    "SELECT r.position FROM response_items r JOIN items i ON i.key = r.item_key \
                     WHERE r.response_id = $1 AND r.section = $2 AND i.public_id = $3 \
                     ORDER BY r.position {dir} LIMIT 1"
                ),
                &[&id, &INPUT, after],
            )
            .await
            .map_err(backend)?
            .ok_or_else(|| StoreError::UnknownCursor(after.clone()))?
            .try_get(0)
            .map_err(backend)?,
    };
    // One extra row tells whether another page follows.
    let fetch = i64::try_from(page.limit)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    let rows = tx
        .query(
            &format!(
                "SELECT i.body FROM response_items r JOIN items i ON i.key = r.item_key \
                 WHERE r.response_id = $1 AND r.section = $2 AND r.position {cmp} $3 \
                 ORDER BY r.position {dir} LIMIT $4"
            ),
            &[&id, &INPUT, &bound, &fetch],
        )
        .await
        .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    let mut items = rows
        .iter()
        .map(|row| {
            row.try_get::<_, &str>(0)
                .map_err(backend)
                .and_then(decode_item)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let has_more = items.len() > page.limit;
    items.truncate(page.limit);
    Ok(Some(ItemPage { items, has_more }))
}

/// The highest key is the most recently stored item with that public id.
pub(super) async fn find_item(
    conn: &ClientWrapper,
    tenant: &str,
    item_id: &str,
) -> Result<Option<Item>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT body FROM items WHERE public_id = $1 AND tenant = $2 \
             ORDER BY key DESC LIMIT 1",
        )
        .await
        .map_err(backend)?;
    let row = conn
        .query_opt(&stmt, &[&item_id, &tenant])
        .await
        .map_err(backend)?;
    row.map(|r| {
        r.try_get::<_, &str>(0)
            .map_err(backend)
            .and_then(decode_item)
    })
    .transpose()
}

pub(super) async fn trace(
    conn: &ClientWrapper,
    tenant: &str,
    response_id: &str,
) -> Result<Option<Trace>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT t.body FROM response_traces t JOIN responses r ON r.id = t.response_id \
             WHERE t.response_id = $1 AND r.tenant = $2",
        )
        .await
        .map_err(backend)?;
    let row = conn
        .query_opt(&stmt, &[&response_id, &tenant])
        .await
        .map_err(backend)?;
    row.map(|r| {
        let body: &str = r.try_get(0).map_err(backend)?;
        serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("trace: {e}")))
    })
    .transpose()
}

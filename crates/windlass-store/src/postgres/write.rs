//! Writes: saving a response with its items (one statement), deleting one.

use deadpool_postgres::{ClientWrapper, Object};
use tokio_postgres::error::SqlState;
use windlass_engine::{NewResponse, StoreError};

use super::error::backend;
use super::sections::{HISTORY, INPUT, OUTPUT};
use crate::codec::{encode_item, encode_resource};

/// The save: ONE statement, so one round trip and atomic on its own.
///
/// - `parent` names the predecessor only if it exists and belongs to the
///   same tenant, so an unknown, deleted or foreign predecessor means an
///   empty history. `FOR KEY SHARE` holds it
///   against a concurrent delete (which locks it `FOR UPDATE`): the delete
///   then sees this response as a successor and hands it its history, or
///   the delete went first and this save finds no parent.
/// - Item keys are drawn from the sequence once per row (`rows` is
///   referenced twice, so Postgres materializes it), which lets the items
///   and the references be inserted from the same rows.
/// - The trace, when there is one, goes in with the response.
/// - The response's live row (it was running) goes in the same statement,
///   so it is always exactly one of live, stored or unknown.
const SAVE: &str = "\
WITH parent AS ( \
    SELECT p.id FROM responses p WHERE p.id = $3 AND p.tenant = $10 FOR KEY SHARE \
), resp AS ( \
    INSERT INTO responses (id, created_at, previous_response_id, body, history_parent, tenant) \
    VALUES ($1, $2, $3, $4, (SELECT id FROM parent), $10) \
    RETURNING id \
), rows AS ( \
    SELECT nextval('items_key_seq') AS key, t.section, t.position, t.public_id, t.body \
    FROM unnest($5::smallint[], $6::integer[], $7::text[], $8::text[]) \
         AS t (section, position, public_id, body) \
), new_items AS ( \
    INSERT INTO items (key, public_id, body, tenant) SELECT key, public_id, body, $10 FROM rows \
), refs AS ( \
    INSERT INTO response_items (response_id, section, position, item_key) \
    SELECT resp.id, rows.section, rows.position, rows.key FROM resp, rows \
), live AS ( \
    DELETE FROM live_runs WHERE id = (SELECT id FROM resp) \
) \
INSERT INTO response_traces (response_id, body) \
SELECT resp.id, $9 FROM resp WHERE $9::text IS NOT NULL";

/// The columns of the item rows of one save, input then output.
#[derive(Default)]
struct Rows {
    sections: Vec<i16>,
    positions: Vec<i32>,
    public_ids: Vec<Option<String>>,
    bodies: Vec<String>,
}

fn rows(new: &NewResponse<'_>) -> Result<Rows, StoreError> {
    let mut rows = Rows::default();
    for (section, items) in [(INPUT, new.input), (OUTPUT, &new.response.output[..])] {
        for (position, item) in items.iter().enumerate() {
            rows.sections.push(section);
            rows.positions
                .push(i32::try_from(position).unwrap_or(i32::MAX));
            rows.public_ids.push(item.id().map(str::to_owned));
            rows.bodies.push(encode_item(item)?);
        }
    }
    Ok(rows)
}

/// Saves the response row, its items and references, and its trace.
pub(super) async fn save(conn: &ClientWrapper, new: NewResponse<'_>) -> Result<(), StoreError> {
    let resource = new.response;
    let body = encode_resource(resource)?;
    let rows = rows(&new)?;
    let trace = new
        .trace
        .map(|t| serde_json::to_string(t).map_err(|e| StoreError::Backend(format!("trace: {e}"))))
        .transpose()?;
    let created_at = i64::try_from(resource.created_at).unwrap_or(i64::MAX);
    let stmt = conn.prepare_cached(SAVE).await.map_err(backend)?;
    let result = conn
        .execute(
            &stmt,
            &[
                &resource.id,
                &created_at,
                &resource.previous_response_id,
                &body,
                &rows.sections,
                &rows.positions,
                &rows.public_ids,
                &rows.bodies,
                &trace,
                &new.tenant,
            ],
        )
        .await;
    match result {
        Ok(_) => Ok(()),
        Err(e) if is_duplicate_response(&e) => Err(StoreError::Duplicate(resource.id.clone())),
        Err(e) => Err(backend(e)),
    }
}

/// The response id is taken (not any other unique key).
fn is_duplicate_response(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| {
        *d.code() == SqlState::UNIQUE_VIOLATION && d.constraint() == Some("responses_pkey")
    })
}

/// Serializes deletes against each other: a delete rewrites its successors'
/// rows, and two deletes of neighbours in one chain must not interleave.
/// Deletes are rare; saves never take it.
const DELETE_LOCK: i64 = 0x7769_6e64_6c64_656c;

/// Deletes a response and its references, then the items nothing
/// references any more. Successors keep working: each response continuing
/// from this one first takes over its references (as history rows placed
/// before its own) and its predecessor, so its transcript stays the same.
pub(super) async fn delete(conn: &mut Object, tenant: &str, id: &str) -> Result<bool, StoreError> {
    // Rolled back when dropped on an error.
    let tx = conn.transaction().await.map_err(backend)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&DELETE_LOCK])
        .await
        .map_err(backend)?;
    // Locked against saves continuing from it (see SAVE). Every statement
    // after this one sees the successors committed before the lock.
    let found = tx
        .query_opt(
            "SELECT 1 FROM responses WHERE id = $1 AND tenant = $2 FOR UPDATE",
            &[&id, &tenant],
        )
        .await
        .map_err(backend)?;
    // Its stream events and live row go whatever else there is.
    tx.execute(
        "DELETE FROM response_events WHERE response_id = $1 AND tenant = $2",
        &[&id, &tenant],
    )
    .await
    .map_err(backend)?;
    let live = tx
        .execute(
            "DELETE FROM live_runs WHERE id = $1 AND tenant = $2",
            &[&id, &tenant],
        )
        .await
        .map_err(backend)?;
    if found.is_none() {
        tx.commit().await.map_err(backend)?;
        return Ok(live > 0);
    }
    tx.execute(
        "INSERT INTO response_items (response_id, section, position, item_key) \
         SELECT c.id, $2::smallint, \
                (SELECT COALESCE(MIN(x.position), 0) FROM response_items x \
                 WHERE x.response_id = c.id AND x.section = $2::smallint) \
                - (SELECT COUNT(*) FROM response_items WHERE response_id = $1) \
                + ROW_NUMBER() OVER (PARTITION BY c.id ORDER BY r.section, r.position) - 1, \
                r.item_key \
         FROM responses c JOIN response_items r ON r.response_id = $1 \
         WHERE c.history_parent = $1",
        &[&id, &HISTORY],
    )
    .await
    .map_err(backend)?;
    tx.execute(
        "UPDATE responses SET history_parent = \
         (SELECT p.history_parent FROM responses p WHERE p.id = $1) \
         WHERE history_parent = $1",
        &[&id],
    )
    .await
    .map_err(backend)?;
    // Items only this response references (the reference foreign key is
    // deferred to commit, so this can run before the references go).
    tx.execute(
        "DELETE FROM items \
         WHERE key IN (SELECT item_key FROM response_items WHERE response_id = $1) \
           AND NOT EXISTS (SELECT 1 FROM response_items r \
                           WHERE r.item_key = items.key AND r.response_id <> $1)",
        &[&id],
    )
    .await
    .map_err(backend)?;
    tx.execute("DELETE FROM response_items WHERE response_id = $1", &[&id])
        .await
        .map_err(backend)?;
    let deleted = tx
        .execute("DELETE FROM responses WHERE id = $1", &[&id])
        .await
        .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    Ok(deleted + live > 0)
}

//! Writes: saving a response with its item references, and deleting one.
//!
//! Both run in `BEGIN IMMEDIATE` transactions: taking the write lock up front
//! means a concurrent writer waits on the busy timeout instead of failing
//! when a read lock cannot be upgraded.

use sqlx::{Sqlite, SqlitePool, Transaction};
use windlass_engine::{NewResponse, StoreError};
use windlass_protocol::Item;

use super::{HISTORY, INPUT, OUTPUT};
use crate::codec::{backend, encode_item, encode_resource};

/// Saves the response row, its history references (copied from its
/// predecessor's references, never its item rows), and its input and output
/// items. All or nothing.
pub(super) async fn save(pool: &SqlitePool, new: NewResponse<'_>) -> Result<(), StoreError> {
    let resource = new.response;
    let body = encode_resource(resource)?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend)?;

    sqlx::query(
        "INSERT INTO responses (id, created_at, previous_response_id, body) VALUES (?, ?, ?, ?)",
    )
    .bind(&resource.id)
    .bind(i64::try_from(resource.created_at).unwrap_or(i64::MAX))
    .bind(&resource.previous_response_id)
    .bind(body)
    .execute(&mut *tx)
    .await
    .map_err(|e| match e.as_database_error() {
        Some(db) if db.is_unique_violation() => StoreError::Duplicate(resource.id.clone()),
        _ => backend(e),
    })?;

    if let Some(previous) = &resource.previous_response_id {
        // The predecessor's whole transcript, renumbered from 0. An unknown
        // (e.g. deleted) predecessor selects nothing: empty history.
        sqlx::query(
            "INSERT INTO response_items (response_id, section, position, item_key) \
             SELECT ?1, ?2, ROW_NUMBER() OVER (ORDER BY section, position) - 1, item_key \
             FROM response_items WHERE response_id = ?3",
        )
        .bind(&resource.id)
        .bind(HISTORY)
        .bind(previous)
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
    }

    insert_items(&mut tx, &resource.id, INPUT, new.input).await?;
    insert_items(&mut tx, &resource.id, OUTPUT, &resource.output).await?;
    tx.commit().await.map_err(backend)
}

/// Stores each item once and references it from `section` of `response_id`.
async fn insert_items(
    tx: &mut Transaction<'_, Sqlite>,
    response_id: &str,
    section: i64,
    items: &[Item],
) -> Result<(), StoreError> {
    for (position, item) in (0_i64..).zip(items) {
        let key: i64 =
            sqlx::query_scalar("INSERT INTO items (public_id, body) VALUES (?, ?) RETURNING key")
                .bind(item.id())
                .bind(encode_item(item)?)
                .fetch_one(&mut **tx)
                .await
                .map_err(backend)?;
        sqlx::query(
            "INSERT INTO response_items (response_id, section, position, item_key) VALUES (?, ?, ?, ?)",
        )
        .bind(response_id)
        .bind(section)
        .bind(position)
        .bind(key)
        .execute(&mut **tx)
        .await
        .map_err(backend)?;
    }
    Ok(())
}

/// Deletes a response and its references, then the items nothing references
/// any more. Successors keep their own references, so their items survive.
pub(super) async fn delete(pool: &SqlitePool, id: &str) -> Result<bool, StoreError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend)?;

    // Items only this response references. Runs before the references go
    // (the foreign key from references to items is deferred to commit), so
    // only this response's own items are examined, not the whole table.
    sqlx::query(
        "DELETE FROM items \
         WHERE key IN (SELECT item_key FROM response_items WHERE response_id = ?1) \
           AND NOT EXISTS (SELECT 1 FROM response_items r \
                           WHERE r.item_key = items.key AND r.response_id <> ?1)",
    )
    .bind(id)
    .execute(&mut *tx)
    .await
    .map_err(backend)?;

    sqlx::query("DELETE FROM response_items WHERE response_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(backend)?;

    let deleted = sqlx::query("DELETE FROM responses WHERE id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(backend)?
        .rows_affected();

    tx.commit().await.map_err(backend)?;
    Ok(deleted > 0)
}

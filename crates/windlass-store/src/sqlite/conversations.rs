//! Conversations on SQLite (`migrations/0006_conversations.sql`).

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde_json::{Map, Value};
use windlass_engine::{Conversation, ConversationRetention, ConversationStore, StoreError};
use windlass_protocol::Item;

use super::write::on_writer;
use super::SqliteStore;
use crate::codec::{backend, decode_item};
use crate::conversation_codec::{decode_conversation, encode_items, encode_metadata};

fn read_conversation(
    conn: &Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<Conversation>, StoreError> {
    let row: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT created_at, metadata FROM conversations WHERE id = ?1 AND tenant = ?2",
        )
        .and_then(|mut s| {
            s.query_row(params![id, tenant], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(backend)?;
    row.map(|(created_at, metadata)| decode_conversation(id, created_at, &metadata))
        .transpose()
}

fn read_items(conn: &Connection, id: &str) -> Result<Vec<Item>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT body FROM conversation_items WHERE conversation_id = ? ORDER BY position",
        )
        .map_err(backend)?;
    let bodies = stmt
        .query_map([id], |r| r.get::<_, String>(0))
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    bodies.iter().map(|b| decode_item(b)).collect()
}

fn append(
    conn: &Connection,
    id: &str,
    rows: &[(Option<String>, String)],
) -> Result<(), StoreError> {
    let next: i64 = conn
        .prepare_cached(
            "SELECT IFNULL(MAX(position), -1) + 1 FROM conversation_items WHERE conversation_id = ?",
        )
        .and_then(|mut s| s.query_row([id], |r| r.get(0)))
        .map_err(backend)?;
    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO conversation_items (conversation_id, position, item_id, body) \
             VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(backend)?;
    for (n, (item_id, body)) in rows.iter().enumerate() {
        let position = next + i64::try_from(n).unwrap_or(i64::MAX);
        stmt.execute(params![id, position, item_id, body])
            .map_err(backend)?;
    }
    Ok(())
}

/// Marks the conversation used now (for retention).
fn touch(conn: &Connection, id: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE conversations SET updated_at = MAX(updated_at, CAST(strftime('%s', 'now') AS INTEGER)) \
         WHERE id = ?1",
    )
    .and_then(|mut s| s.execute([id]))
    .map_err(backend)?;
    Ok(())
}

fn owned(conn: &Connection, tenant: &str, id: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1 AND tenant = ?2)")
        .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)))
        .map_err(backend)
}

#[async_trait::async_trait]
impl ConversationStore for SqliteStore {
    async fn create_conversation(
        &self,
        tenant: &str,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError> {
        let rows = encode_items(items)?;
        let metadata = encode_metadata(&conversation.metadata)?;
        let (tenant, id) = (tenant.to_owned(), conversation.id.clone());
        let created_at = i64::try_from(conversation.created_at).unwrap_or(i64::MAX);
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            tx.prepare_cached(
                "INSERT INTO conversations (id, tenant, created_at, metadata, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?3)",
            )
            .and_then(|mut s| s.execute(params![id, tenant, created_at, metadata]))
            .map_err(|e| match crate::codec::is_unique_violation(&e) {
                true => StoreError::Duplicate(id.clone()),
                false => backend(e),
            })?;
            append(&tx, &id, &rows)?;
            tx.commit().map_err(backend)
        })
        .await
    }

    async fn get_conversation(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read_conversation(conn.conn()?, tenant, id)
    }

    async fn update_conversation(
        &self,
        tenant: &str,
        id: &str,
        metadata: &Map<String, Value>,
    ) -> Result<Option<Conversation>, StoreError> {
        let encoded = encode_metadata(metadata)?;
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            conn.prepare_cached(
                "UPDATE conversations SET metadata = ?1, \
                 updated_at = MAX(updated_at, CAST(strftime('%s', 'now') AS INTEGER)) \
                 WHERE id = ?2 AND tenant = ?3",
            )
            .and_then(|mut s| s.execute(params![encoded, id, tenant]))
            .map_err(backend)?;
            read_conversation(conn, &tenant, &id)
        })
        .await
    }

    async fn delete_conversation(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn.transaction().map_err(backend)?;
            if !owned(&tx, &tenant, &id)? {
                return Ok(false);
            }
            tx.execute(
                "DELETE FROM conversation_items WHERE conversation_id = ?",
                [&id],
            )
            .map_err(backend)?;
            tx.execute("DELETE FROM conversations WHERE id = ?", [&id])
                .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }

    async fn conversation_context(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<Item>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let conn = conn.conn()?;
        let tx = conn.transaction().map_err(backend)?;
        if !owned(&tx, tenant, id)? {
            return Ok(None);
        }
        read_items(&tx, id).map(Some)
    }

    async fn append_conversation_items(
        &self,
        tenant: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError> {
        let rows = encode_items(items)?;
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            if !owned(&tx, &tenant, &id)? {
                return Ok(false);
            }
            append(&tx, &id, &rows)?;
            touch(&tx, &id)?;
            tx.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }

    async fn conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let conn = conn.conn()?;
        if !owned(conn, tenant, id)? {
            return Ok(None);
        }
        let body: Option<String> = conn
            .prepare_cached(
                "SELECT body FROM conversation_items WHERE conversation_id = ?1 AND item_id = ?2 \
                 ORDER BY position LIMIT 1",
            )
            .and_then(|mut s| s.query_row(params![id, item_id], |r| r.get(0)).optional())
            .map_err(backend)?;
        body.map(|b| decode_item(&b)).transpose()
    }

    async fn delete_conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError> {
        let (tenant, id, item_id) = (tenant.to_owned(), id.to_owned(), item_id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn.transaction().map_err(backend)?;
            if !owned(&tx, &tenant, &id)? {
                return Ok(false);
            }
            let n = tx
                .execute(
                    "DELETE FROM conversation_items WHERE conversation_id = ?1 AND item_id = ?2",
                    params![id, item_id],
                )
                .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(n > 0)
        })
        .await
    }
}

#[async_trait::async_trait]
impl ConversationRetention for SqliteStore {
    async fn prune_conversations(&self, active_before: u64) -> Result<u64, StoreError> {
        super::prune::prune_conversations(&self.writer, active_before).await
    }
}

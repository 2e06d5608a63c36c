//! Conversations on Postgres (`migrations-pg/0005_conversations.sql`).
//!
//! Every operation is one statement (one round trip, atomic on its own).
//! The owner tenant is part of every lookup, so another tenant's
//! conversation behaves exactly like an unknown id.

use deadpool_postgres::ClientWrapper;
use serde_json::{Map, Value};
use tokio_postgres::error::SqlState;
use windlass_engine::{Conversation, ConversationRetention, ConversationStore, StoreError};
use windlass_protocol::Item;

use super::error::backend;
use super::PgStore;
use crate::codec::decode_item;
use crate::conversation_codec::{decode_conversation, encode_items, encode_metadata};

/// The conversation and its first items; positions start at 0.
const CREATE: &str = "\
WITH conv AS ( \
    INSERT INTO conversations (id, tenant, created_at, metadata, next_position, updated_at) \
    VALUES ($1, $2, $3, $4, cardinality($6::text[]), $3) \
    RETURNING id \
) \
INSERT INTO conversation_items (conversation_id, position, item_id, body) \
SELECT conv.id, t.ord - 1, t.item_id, t.body \
FROM conv, unnest($5::text[], $6::text[]) WITH ORDINALITY AS t (item_id, body, ord)";

/// Reserves positions by bumping `next_position` (an UPDATE waits for a
/// concurrent append's and then sees its result, so two appends never take
/// the same positions), inserts the items there, and tells whether the
/// conversation exists (data-modifying CTEs run whether or not read).
const APPEND: &str = "\
WITH conv AS ( \
    UPDATE conversations SET next_position = next_position + cardinality($4::text[]), \
        updated_at = GREATEST(updated_at, extract(epoch FROM now())::bigint) \
    WHERE id = $1 AND tenant = $2 \
    RETURNING id, next_position - cardinality($4::text[]) AS start \
), added AS ( \
    INSERT INTO conversation_items (conversation_id, position, item_id, body) \
    SELECT conv.id, conv.start + t.ord - 1, t.item_id, t.body \
    FROM conv, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t (item_id, body, ord) \
) \
SELECT EXISTS (SELECT 1 FROM conv)";

/// The item columns of `items`: ids and JSON bodies.
fn columns(items: &[Item]) -> Result<(Vec<Option<String>>, Vec<String>), StoreError> {
    Ok(encode_items(items)?.into_iter().unzip())
}

fn decode_bodies(bodies: Vec<&str>) -> Result<Vec<Item>, StoreError> {
    bodies.into_iter().map(decode_item).collect()
}

async fn create(
    conn: &ClientWrapper,
    tenant: &str,
    conversation: &Conversation,
    items: &[Item],
) -> Result<(), StoreError> {
    let (ids, bodies) = columns(items)?;
    let metadata = encode_metadata(&conversation.metadata)?;
    let created_at = i64::try_from(conversation.created_at).unwrap_or(i64::MAX);
    let stmt = conn.prepare_cached(CREATE).await.map_err(backend)?;
    let id = &conversation.id;
    match conn
        .execute(&stmt, &[id, &tenant, &created_at, &metadata, &ids, &bodies])
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_duplicate_conversation(&e) => Err(StoreError::Duplicate(id.clone())),
        Err(e) => Err(backend(e)),
    }
}

/// The conversation id is taken (by any tenant: ids are global).
fn is_duplicate_conversation(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| {
        *d.code() == SqlState::UNIQUE_VIOLATION && d.constraint() == Some("conversations_pkey")
    })
}

async fn get(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
) -> Result<Option<Conversation>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT created_at, metadata FROM conversations WHERE id = $1 AND tenant = $2",
        )
        .await
        .map_err(backend)?;
    let row = conn
        .query_opt(&stmt, &[&id, &tenant])
        .await
        .map_err(backend)?;
    row.map(|r| decode_conversation(id, r.get(0), r.get(1)))
        .transpose()
}

async fn update(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
    metadata: &Map<String, Value>,
) -> Result<Option<Conversation>, StoreError> {
    let encoded = encode_metadata(metadata)?;
    let stmt = conn
        .prepare_cached(
            "UPDATE conversations SET metadata = $3, \
             updated_at = GREATEST(updated_at, extract(epoch FROM now())::bigint) \
             WHERE id = $1 AND tenant = $2 \
             RETURNING created_at, metadata",
        )
        .await
        .map_err(backend)?;
    let row = conn
        .query_opt(&stmt, &[&id, &tenant, &encoded])
        .await
        .map_err(backend)?;
    row.map(|r| decode_conversation(id, r.get(0), r.get(1)))
        .transpose()
}

/// Every item in order, read with the ownership check in one query (one
/// snapshot): `None` when the conversation is unknown to `tenant`.
async fn context(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
) -> Result<Option<Vec<Item>>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT ARRAY(SELECT i.body FROM conversation_items i \
                          WHERE i.conversation_id = c.id ORDER BY i.position) \
             FROM conversations c WHERE c.id = $1 AND c.tenant = $2",
        )
        .await
        .map_err(backend)?;
    let Some(row) = conn
        .query_opt(&stmt, &[&id, &tenant])
        .await
        .map_err(backend)?
    else {
        return Ok(None);
    };
    decode_bodies(row.try_get(0).map_err(backend)?).map(Some)
}

async fn append(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
    items: &[Item],
) -> Result<bool, StoreError> {
    let (ids, bodies) = columns(items)?;
    let stmt = conn.prepare_cached(APPEND).await.map_err(backend)?;
    let row = conn
        .query_one(&stmt, &[&id, &tenant, &ids, &bodies])
        .await
        .map_err(backend)?;
    row.try_get(0).map_err(backend)
}

/// The first item with that id; the outer row tells an unknown
/// conversation (no row) from an unknown item (a NULL body).
async fn item(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
    item_id: &str,
) -> Result<Option<Item>, StoreError> {
    let stmt = conn
        .prepare_cached(
            "SELECT (SELECT i.body FROM conversation_items i \
                     WHERE i.conversation_id = c.id AND i.item_id = $3 \
                     ORDER BY i.position LIMIT 1) \
             FROM conversations c WHERE c.id = $1 AND c.tenant = $2",
        )
        .await
        .map_err(backend)?;
    let row = conn
        .query_opt(&stmt, &[&id, &tenant, &item_id])
        .await
        .map_err(backend)?;
    let body: Option<&str> = match &row {
        Some(r) => r.try_get(0).map_err(backend)?,
        None => None,
    };
    body.map(decode_item).transpose()
}

async fn delete_item(
    conn: &ClientWrapper,
    tenant: &str,
    id: &str,
    item_id: &str,
) -> Result<bool, StoreError> {
    let stmt = conn
        .prepare_cached(
            "DELETE FROM conversation_items i USING conversations c \
             WHERE c.id = $1 AND c.tenant = $2 AND i.conversation_id = c.id AND i.item_id = $3",
        )
        .await
        .map_err(backend)?;
    let n = conn
        .execute(&stmt, &[&id, &tenant, &item_id])
        .await
        .map_err(backend)?;
    Ok(n > 0)
}

#[async_trait::async_trait]
impl ConversationStore for PgStore {
    async fn create_conversation(
        &self,
        tenant: &str,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError> {
        create(&*self.conn().await?, tenant, conversation, items).await
    }

    async fn get_conversation(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        get(&*self.conn().await?, tenant, id).await
    }

    async fn update_conversation(
        &self,
        tenant: &str,
        id: &str,
        metadata: &Map<String, Value>,
    ) -> Result<Option<Conversation>, StoreError> {
        update(&*self.conn().await?, tenant, id, metadata).await
    }

    async fn delete_conversation(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        // The items go with it (ON DELETE CASCADE).
        let n = self
            .conn()
            .await?
            .execute(
                "DELETE FROM conversations WHERE id = $1 AND tenant = $2",
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        Ok(n > 0)
    }

    async fn conversation_context(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<Item>>, StoreError> {
        context(&*self.conn().await?, tenant, id).await
    }

    async fn append_conversation_items(
        &self,
        tenant: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError> {
        append(&*self.conn().await?, tenant, id, items).await
    }

    async fn conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError> {
        item(&*self.conn().await?, tenant, id, item_id).await
    }

    async fn delete_conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError> {
        delete_item(&*self.conn().await?, tenant, id, item_id).await
    }
}

/// Conversations deleted per statement.
const PRUNE_BATCH: i64 = 256;

#[async_trait::async_trait]
impl ConversationRetention for PgStore {
    /// In batches, each one statement (the items go by `ON DELETE CASCADE`);
    /// rows another replica's sweep holds are skipped, not waited for.
    async fn prune_conversations(&self, active_before: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(active_before).unwrap_or(i64::MAX);
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "DELETE FROM conversations WHERE id IN ( \
                     SELECT id FROM conversations WHERE updated_at < $1 \
                     ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)",
            )
            .await
            .map_err(backend)?;
        let mut total = 0;
        loop {
            let n = conn
                .execute(&stmt, &[&before, &PRUNE_BATCH])
                .await
                .map_err(backend)?;
            total += n;
            if n < PRUNE_BATCH as u64 {
                return Ok(total);
            }
        }
    }
}

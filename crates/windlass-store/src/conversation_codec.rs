//! The stored form of conversations, shared by the SQLite and Postgres
//! stores: metadata as JSON text, items as (public id, JSON) rows, and the
//! resource rebuilt from a row.

use serde_json::{Map, Value};
use windlass_engine::{Conversation, StoreError};
use windlass_protocol::Item;

use crate::codec::encode_item;

pub(crate) fn encode_metadata(metadata: &Map<String, Value>) -> Result<String, StoreError> {
    serde_json::to_string(metadata).map_err(|e| StoreError::Backend(format!("metadata: {e}")))
}

/// The conversation resource of a stored row.
pub(crate) fn decode_conversation(
    id: &str,
    created_at: i64,
    metadata: &str,
) -> Result<Conversation, StoreError> {
    Ok(Conversation {
        id: id.to_owned(),
        object: "conversation".to_owned(),
        created_at: u64::try_from(created_at).unwrap_or(0),
        metadata: serde_json::from_str(metadata)
            .map_err(|e| StoreError::Corrupt(format!("conversation metadata: {e}")))?,
    })
}

/// Item rows: (item id, JSON), in order.
pub(crate) fn encode_items(items: &[Item]) -> Result<Vec<(Option<String>, String)>, StoreError> {
    items
        .iter()
        .map(|i| Ok((i.id().map(str::to_owned), encode_item(i)?)))
        .collect()
}

//! Called by prepare (history) and at a run's end (append); a port so each store keeps its own.
//!
//! The conversation port: named, durable lists of items that responses read
//! as their history and append their input and output to (OpenAI's
//! Conversations API). Every method takes the owner tenant first; another
//! tenant's conversation behaves exactly like an unknown id.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use windlass_protocol::Item;

use super::store::{ItemPage, PageRequest, StoreError};

/// A conversation as the API returns it (`object: "conversation"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The conversation's id (`conv_...`).
    pub id: String,
    /// Always `conversation`.
    pub object: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The client's key-value metadata.
    pub metadata: Map<String, Value>,
}

/// Where conversations and their items live (`/v1/conversations`), per tenant; the loop reads a conversation as a response's history and appends the response's items.
#[async_trait::async_trait]
pub trait ConversationStore: Send + Sync {
    /// Creates a conversation holding `items` (ids assigned), in order.
    async fn create_conversation(
        &self,
        tenant: &str,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError>;

    /// The conversation; `None` when unknown (or another tenant's).
    async fn get_conversation(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError>;

    /// Replaces the metadata; `None` when the conversation is unknown.
    async fn update_conversation(
        &self,
        tenant: &str,
        id: &str,
        metadata: &Map<String, Value>,
    ) -> Result<Option<Conversation>, StoreError>;

    /// Deletes the conversation and its items (responses stay).
    async fn delete_conversation(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;

    /// A page of the items (`after` is an item id in the chosen order).
    async fn conversation_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        let items = self.conversation_context(tenant, id).await?;
        items.map(|items| ItemPage::of(items, page)).transpose()
    }

    /// Every item, oldest first: the history of a response in it.
    async fn conversation_context(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<Item>>, StoreError>;

    /// Appends items (ids assigned) at the end; false when unknown.
    async fn append_conversation_items(
        &self,
        tenant: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError>;

    /// One item of the conversation; `None` when either is unknown.
    async fn conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError>;

    /// Removes one item; false when the conversation or item is unknown.
    async fn delete_conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError>;
}

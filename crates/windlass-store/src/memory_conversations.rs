//! Conversations in the in-memory store.

use serde_json::{Map, Value};
use windlass_engine::{Conversation, ConversationRetention, ConversationStore, StoreError};
use windlass_protocol::Item;

use crate::memory::{MemoryStore, StoredConversation};

#[async_trait::async_trait]
impl ConversationStore for MemoryStore {
    async fn create_conversation(
        &self,
        tenant: &str,
        conversation: &Conversation,
        items: &[Item],
    ) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        if inner.conversations.contains_key(&conversation.id) {
            return Err(StoreError::Duplicate(conversation.id.clone()));
        }
        inner.conversations.insert(
            conversation.id.clone(),
            StoredConversation {
                tenant: tenant.to_owned(),
                conversation: conversation.clone(),
                items: items.to_vec(),
                updated_at: conversation.created_at,
            },
        );
        Ok(())
    }

    async fn get_conversation(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        let inner = self.lock()?;
        Ok(inner
            .conversation(tenant, id)
            .map(|c| c.conversation.clone()))
    }

    async fn update_conversation(
        &self,
        tenant: &str,
        id: &str,
        metadata: &Map<String, Value>,
    ) -> Result<Option<Conversation>, StoreError> {
        let mut inner = self.lock()?;
        Ok(inner.conversation_mut(tenant, id).map(|c| {
            c.conversation.metadata = metadata.clone();
            c.updated_at = c.updated_at.max(now());
            c.conversation.clone()
        }))
    }

    async fn delete_conversation(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        if inner.conversation(tenant, id).is_none() {
            return Ok(false);
        }
        inner.conversations.remove(id);
        Ok(true)
    }

    async fn conversation_context(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<Item>>, StoreError> {
        Ok(self
            .lock()?
            .conversation(tenant, id)
            .map(|c| c.items.clone()))
    }

    async fn append_conversation_items(
        &self,
        tenant: &str,
        id: &str,
        items: &[Item],
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        Ok(match inner.conversation_mut(tenant, id) {
            Some(c) => {
                c.items.extend_from_slice(items);
                c.updated_at = c.updated_at.max(now());
                true
            }
            None => false,
        })
    }

    async fn conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<Option<Item>, StoreError> {
        let inner = self.lock()?;
        Ok(inner
            .conversation(tenant, id)
            .and_then(|c| c.items.iter().find(|i| i.id() == Some(item_id)).cloned()))
    }

    async fn delete_conversation_item(
        &self,
        tenant: &str,
        id: &str,
        item_id: &str,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        let Some(c) = inner.conversation_mut(tenant, id) else {
            return Ok(false);
        };
        let before = c.items.len();
        c.items.retain(|i| i.id() != Some(item_id));
        Ok(c.items.len() < before)
    }
}

/// Unix seconds now.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[async_trait::async_trait]
impl ConversationRetention for MemoryStore {
    async fn prune_conversations(&self, active_before: u64) -> Result<u64, StoreError> {
        let mut inner = self.lock()?;
        let before = inner.conversations.len();
        inner
            .conversations
            .retain(|_, c| c.updated_at >= active_before);
        Ok((before - inner.conversations.len()) as u64)
    }
}

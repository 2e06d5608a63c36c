//! Retention for conversations: the sweep that deletes, across every
//! tenant, the conversations nobody has used for longer than the retention
//! window (responses have theirs in `ResponseStore::prune`).

use crate::ports::agent::store::StoreError;

/// The conversation retention sweep (see the module doc).
#[async_trait::async_trait]
pub trait ConversationRetention: Send + Sync {
    /// Deletes the conversations (and their items) whose last activity
    /// (creation, an append, a metadata update) is before `active_before`
    /// (Unix seconds), like `delete_conversation` each: responses stay.
    /// Returns how many were deleted.
    async fn prune_conversations(&self, active_before: u64) -> Result<u64, StoreError>;
}

//! The prompt port: stored prompt templates per tenant, each with numbered
//! versions (`"1"`, `"2"`, ...), read by `prompt` on create and managed by
//! a prompts API. Every method takes the owner tenant first; another
//! tenant's prompt behaves exactly like an unknown id.

use windlass_protocol::{Prompt, PromptTemplate, PromptVersion};

use crate::ports::agent::store::StoreError;

/// Stored prompt templates and their versions, per tenant (see the module doc).
#[async_trait::async_trait]
pub trait PromptStore: Send + Sync {
    /// Creates `prompt` with its first version (`version` "1", which
    /// `prompt.latest_version` names). `Duplicate` if the id exists.
    async fn create_prompt(
        &self,
        tenant: &str,
        prompt: &Prompt,
        first: &PromptVersion,
    ) -> Result<(), StoreError>;

    /// Adds the next version, numbered after the newest, and makes it the
    /// latest; `None` when the prompt is unknown.
    async fn add_prompt_version(
        &self,
        tenant: &str,
        id: &str,
        template: &PromptTemplate,
        created_at: u64,
    ) -> Result<Option<PromptVersion>, StoreError>;

    /// The prompt; `None` when unknown (or another tenant's).
    async fn get_prompt(&self, tenant: &str, id: &str) -> Result<Option<Prompt>, StoreError>;

    /// The tenant's prompts, newest first.
    async fn list_prompts(&self, tenant: &str) -> Result<Vec<Prompt>, StoreError>;

    /// One version, or the newest when `version` is `None`; `None` when the
    /// prompt or that version is unknown.
    async fn prompt_version(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<PromptVersion>, StoreError>;

    /// Every version, oldest first; `None` when the prompt is unknown.
    async fn prompt_versions(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<PromptVersion>>, StoreError>;

    /// Deletes the prompt and all its versions.
    async fn delete_prompt(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;
}

//! Prompts in the in-memory store.

use windlass_engine::{PromptStore, StoreError};
use windlass_protocol::{Prompt, PromptTemplate, PromptVersion};

use crate::memory::{MemoryStore, StoredPrompt};

fn owned<'a>(
    prompts: &'a mut std::collections::HashMap<String, StoredPrompt>,
    tenant: &str,
    id: &str,
) -> Option<&'a mut StoredPrompt> {
    prompts.get_mut(id).filter(|p| p.tenant == tenant)
}

#[async_trait::async_trait]
impl PromptStore for MemoryStore {
    async fn create_prompt(
        &self,
        tenant: &str,
        prompt: &Prompt,
        first: &PromptVersion,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        if inner.prompts.contains_key(&prompt.id) {
            return Err(StoreError::Duplicate(prompt.id.clone()));
        }
        inner.prompts.insert(
            prompt.id.clone(),
            StoredPrompt {
                tenant: tenant.to_owned(),
                prompt: prompt.clone(),
                versions: vec![first.clone()],
            },
        );
        Ok(())
    }

    async fn add_prompt_version(
        &self,
        tenant: &str,
        id: &str,
        template: &PromptTemplate,
        created_at: u64,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let mut inner = self.lock()?;
        let Some(stored) = owned(&mut inner.prompts, tenant, id) else {
            return Ok(None);
        };
        let number = stored.versions.len() as u64 + 1;
        let version = PromptVersion::new(id, number, created_at, template.clone());
        stored.prompt.latest_version = version.version.clone();
        stored.versions.push(version.clone());
        Ok(Some(version))
    }

    async fn get_prompt(&self, tenant: &str, id: &str) -> Result<Option<Prompt>, StoreError> {
        let mut inner = self.lock()?;
        Ok(owned(&mut inner.prompts, tenant, id).map(|p| p.prompt.clone()))
    }

    async fn list_prompts(&self, tenant: &str) -> Result<Vec<Prompt>, StoreError> {
        let inner = self.lock()?;
        let mut list: Vec<Prompt> = inner
            .prompts
            .values()
            .filter(|p| p.tenant == tenant)
            .map(|p| p.prompt.clone())
            .collect();
        list.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        Ok(list)
    }

    async fn prompt_version(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let mut inner = self.lock()?;
        let Some(stored) = owned(&mut inner.prompts, tenant, id) else {
            return Ok(None);
        };
        Ok(match version {
            None => stored.versions.last().cloned(),
            Some(v) => stored.versions.iter().find(|x| x.version == v).cloned(),
        })
    }

    async fn prompt_versions(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<PromptVersion>>, StoreError> {
        let mut inner = self.lock()?;
        Ok(owned(&mut inner.prompts, tenant, id).map(|p| p.versions.clone()))
    }

    async fn delete_prompt(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        if owned(&mut inner.prompts, tenant, id).is_none() {
            return Ok(false);
        }
        inner.prompts.remove(id);
        Ok(true)
    }
}

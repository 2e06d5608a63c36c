//! The in-memory store: the SQLite store's semantics without a database, for
//! tests and for setups that do not keep anything on disk.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};

use windlass_engine::{
    ItemPage, LiveRecord, NewResponse, PageRequest, ResponseStore, StoreError, StoredEvent, Trace,
};
use windlass_protocol::{Container, ContainerFile, Item, Prompt, PromptVersion, ResponseResource};

/// A [`ResponseStore`] kept in process memory; everything is lost on drop.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    /// Containers and their files (see `memory_containers.rs`).
    pub(crate) containers: Mutex<ContainerTables>,
}

/// Mirrors the SQLite schema: items stored once under a monotonic key, and
/// responses holding ordered keys. Reference counts stand in for the
/// "still referenced?" query that garbage-collects items.
#[derive(Debug, Default)]
pub(crate) struct Inner {
    next_key: u64,
    items: HashMap<u64, StoredItem>,
    /// Public id -> keys of the items carrying it; the last is the newest.
    by_public_id: HashMap<String, BTreeSet<u64>>,
    responses: HashMap<String, StoredResponse>,
    /// Execution traces by response id, removed with the response.
    traces: HashMap<String, Trace>,
    /// Responses that have not ended (see `memory_runs.rs`).
    pub(crate) live: HashMap<String, LiveRecord>,
    /// Stored stream events by response id, with their tenant.
    pub(crate) events: HashMap<String, (String, Vec<StoredEvent>)>,
    /// Conversations by id (see `memory_conversations.rs`).
    pub(crate) conversations: HashMap<String, StoredConversation>,
    /// Prompts by id (see `memory_prompts.rs`).
    pub(crate) prompts: HashMap<String, StoredPrompt>,
}

#[derive(Debug)]
pub(crate) struct StoredConversation {
    pub tenant: String,
    pub conversation: windlass_engine::Conversation,
    /// Oldest first.
    pub items: Vec<Item>,
    /// Last use (Unix seconds), for retention.
    pub updated_at: u64,
}

/// Containers and their files, by container id (the methods are in
/// `memory_containers.rs`; the types live here, beside the store that holds
/// them, so the two files do not import each other).
#[derive(Debug, Default)]
pub(crate) struct ContainerTables {
    /// By container id.
    pub(crate) containers: HashMap<String, StoredContainer>,
}

/// One container (see `memory_containers.rs`).
#[derive(Debug)]
pub(crate) struct StoredContainer {
    pub(crate) tenant: String,
    pub(crate) container: Container,
    /// By file id.
    pub(crate) files: HashMap<String, (ContainerFile, Vec<u8>)>,
}

/// A prompt and its versions (see `memory_prompts.rs`).
#[derive(Debug)]
pub(crate) struct StoredPrompt {
    pub(crate) tenant: String,
    pub(crate) prompt: Prompt,
    /// Oldest first; version n is at n - 1.
    pub(crate) versions: Vec<PromptVersion>,
}

#[derive(Debug)]
struct StoredItem {
    item: Item,
    /// The tenant of the response that stored it (its references all
    /// belong to that tenant: chains never cross tenants).
    tenant: String,
    refs: usize,
}

#[derive(Debug)]
struct StoredResponse {
    tenant: String,
    /// The resource with `output` emptied, as in the SQLite store.
    resource: ResponseResource,
    history: Vec<u64>,
    input: Vec<u64>,
    output: Vec<u64>,
}

impl StoredResponse {
    fn owned_by(&self, tenant: &str) -> bool {
        self.tenant == tenant
    }

    fn context_keys(&self) -> impl Iterator<Item = &u64> {
        self.history.iter().chain(&self.input).chain(&self.output)
    }
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A poisoned lock means a call panicked mid-update; report it as a
    /// backend failure instead of panicking again or trusting the state.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Inner>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError::Backend("memory store lock poisoned".into()))
    }
}

impl Inner {
    pub(crate) fn conversation(&self, tenant: &str, id: &str) -> Option<&StoredConversation> {
        self.conversations.get(id).filter(|c| c.tenant == tenant)
    }

    pub(crate) fn conversation_mut(
        &mut self,
        tenant: &str,
        id: &str,
    ) -> Option<&mut StoredConversation> {
        self.conversations
            .get_mut(id)
            .filter(|c| c.tenant == tenant)
    }

    pub(crate) fn is_stored(&self, id: &str) -> bool {
        self.responses.contains_key(id)
    }

    fn insert_item(&mut self, tenant: &str, item: &Item) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        if let Some(id) = item.id() {
            self.by_public_id
                .entry(id.to_owned())
                .or_default()
                .insert(key);
        }
        self.items.insert(
            key,
            StoredItem {
                item: item.clone(),
                tenant: tenant.to_owned(),
                refs: 1,
            },
        );
        key
    }

    fn retain(&mut self, key: u64) {
        if let Some(stored) = self.items.get_mut(&key) {
            stored.refs += 1;
        }
    }

    /// Drops one reference; an item nothing references any more is removed.
    fn release(&mut self, key: u64) {
        let Some(stored) = self.items.get_mut(&key) else {
            return;
        };
        stored.refs -= 1;
        if stored.refs > 0 {
            return;
        }
        if let Some(stored) = self.items.remove(&key) {
            if let Some(id) = stored.item.id() {
                if let Some(keys) = self.by_public_id.get_mut(id) {
                    keys.remove(&key);
                    if keys.is_empty() {
                        self.by_public_id.remove(id);
                    }
                }
            }
        }
    }

    /// Removes a response, its trace and the items only it referenced.
    fn remove(&mut self, id: &str) -> bool {
        let Some(response) = self.responses.remove(id) else {
            return false;
        };
        self.traces.remove(id);
        self.events.remove(id);
        self.live.remove(id);
        for &key in response.context_keys() {
            self.release(key);
        }
        true
    }

    /// The response `id` if `tenant` owns it; another tenant's is unknown.
    fn owned(&self, tenant: &str, id: &str) -> Option<&StoredResponse> {
        self.responses.get(id).filter(|r| r.owned_by(tenant))
    }

    fn items_of<'a>(&'a self, keys: impl IntoIterator<Item = &'a u64>) -> Vec<Item> {
        keys.into_iter()
            .filter_map(|k| self.items.get(k))
            .map(|s| s.item.clone())
            .collect()
    }
}

#[async_trait::async_trait]
impl ResponseStore for MemoryStore {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        let resource = new.response;
        let mut inner = self.lock()?;
        // Checked before any mutation, which makes the save all or nothing.
        if inner.responses.contains_key(&resource.id) {
            return Err(StoreError::Duplicate(resource.id.clone()));
        }
        let history: Vec<u64> = resource
            .previous_response_id
            .as_ref()
            .and_then(|p| inner.responses.get(p))
            .filter(|p| p.owned_by(new.tenant))
            .map(|p| p.context_keys().copied().collect())
            .unwrap_or_default();
        for &key in &history {
            inner.retain(key);
        }
        let input = new
            .input
            .iter()
            .map(|i| inner.insert_item(new.tenant, i))
            .collect();
        let output = resource
            .output
            .iter()
            .map(|i| inner.insert_item(new.tenant, i))
            .collect();
        let stored = StoredResponse {
            tenant: new.tenant.to_owned(),
            resource: ResponseResource {
                output: Vec::new(),
                ..resource.clone()
            },
            history,
            input,
            output,
        };
        inner.responses.insert(resource.id.clone(), stored);
        inner.live.remove(&resource.id);
        if let Some(trace) = new.trace {
            inner.traces.insert(resource.id.clone(), trace.clone());
        }
        Ok(())
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        let inner = self.lock()?;
        Ok(inner.owned(tenant, id).map(|r| ResponseResource {
            output: inner.items_of(&r.output),
            ..r.resource.clone()
        }))
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        let inner = self.lock()?;
        Ok(inner
            .owned(tenant, id)
            .map(|r| inner.items_of(r.context_keys())))
    }

    async fn input_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        let inner = self.lock()?;
        let Some(response) = inner.owned(tenant, id) else {
            return Ok(None);
        };
        // The first occurrence of `after` in the requested order, as in SQLite.
        ItemPage::of(inner.items_of(&response.input), page).map(Some)
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        if inner.owned(tenant, id).is_none() {
            // A response that has not ended yet has only a live row.
            if inner.live.get(id).is_some_and(|r| r.tenant == tenant) {
                inner.live.remove(id);
                inner.events.remove(id);
                return Ok(true);
            }
            return Ok(false);
        }
        Ok(inner.remove(id))
    }

    async fn prune(&self, created_before: u64) -> Result<u64, StoreError> {
        let mut inner = self.lock()?;
        let old: Vec<String> = inner
            .responses
            .iter()
            .filter(|(_, r)| r.resource.created_at < created_before)
            .map(|(id, _)| id.clone())
            .collect();
        // Histories are copied, not linked, here: any order keeps the
        // survivors' transcripts.
        Ok(old.iter().filter(|id| inner.remove(id)).count() as u64)
    }

    async fn find_item(&self, tenant: &str, item_id: &str) -> Result<Option<Item>, StoreError> {
        let inner = self.lock()?;
        let Some(keys) = inner.by_public_id.get(item_id) else {
            return Ok(None);
        };
        Ok(keys
            .iter()
            .rev()
            .filter_map(|k| inner.items.get(k))
            .find(|s| s.tenant == tenant)
            .map(|s| s.item.clone()))
    }

    async fn trace(&self, tenant: &str, response_id: &str) -> Result<Option<Trace>, StoreError> {
        let inner = self.lock()?;
        if inner.owned(tenant, response_id).is_none() {
            return Ok(None);
        }
        Ok(inner.traces.get(response_id).cloned())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.lock().map(drop)
    }
}

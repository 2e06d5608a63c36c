//! Containers in the in-memory store, with the SQLite store's semantics.

use std::collections::HashMap;
use std::sync::MutexGuard;

use windlass_engine::{
    ContainerListRequest, ContainerPage, ContainerStore, ExpiredContainer, SortOrder, StoreError,
};
use windlass_protocol::{Container, ContainerFile, ContainerStatus};

use crate::memory::{ContainerTables, MemoryStore, StoredContainer};

impl ContainerTables {
    fn owned(&self, tenant: &str, id: &str) -> Option<&StoredContainer> {
        self.containers.get(id).filter(|c| c.tenant == tenant)
    }

    fn owned_mut(&mut self, tenant: &str, id: &str) -> Option<&mut StoredContainer> {
        self.containers.get_mut(id).filter(|c| c.tenant == tenant)
    }
}

impl MemoryStore {
    fn tables(&self) -> Result<MutexGuard<'_, ContainerTables>, StoreError> {
        self.containers
            .lock()
            .map_err(|_| StoreError::Backend("memory store lock poisoned".into()))
    }
}

/// `rows` sorted by (created_at, id) in `page.order`, cut after the cursor.
fn paged<T: Clone>(
    mut rows: Vec<(u64, String, T)>,
    page: &ContainerListRequest,
) -> Result<ContainerPage<T>, StoreError> {
    rows.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    if page.order == SortOrder::Desc {
        rows.reverse();
    }
    let start = match &page.after {
        None => 0,
        Some(after) => {
            rows.iter()
                .position(|r| &r.1 == after)
                .ok_or_else(|| StoreError::UnknownCursor(after.clone()))?
                + 1
        }
    };
    let rest = &rows[start.min(rows.len())..];
    let data = rest.iter().take(page.limit).map(|r| r.2.clone()).collect();
    Ok(ContainerPage {
        data,
        has_more: rest.len() > page.limit,
    })
}

#[async_trait::async_trait]
impl ContainerStore for MemoryStore {
    async fn create_container(
        &self,
        tenant: &str,
        container: &Container,
    ) -> Result<(), StoreError> {
        let mut t = self.tables()?;
        if t.containers.contains_key(&container.id) {
            return Err(StoreError::Duplicate(container.id.clone()));
        }
        t.containers.insert(
            container.id.clone(),
            StoredContainer {
                tenant: tenant.to_owned(),
                container: container.clone(),
                files: HashMap::new(),
            },
        );
        Ok(())
    }

    async fn get_container(&self, tenant: &str, id: &str) -> Result<Option<Container>, StoreError> {
        Ok(self
            .tables()?
            .owned(tenant, id)
            .map(|c| c.container.clone()))
    }

    async fn list_containers(
        &self,
        tenant: &str,
        page: &ContainerListRequest,
    ) -> Result<ContainerPage<Container>, StoreError> {
        let t = self.tables()?;
        let rows = t
            .containers
            .values()
            .filter(|c| c.tenant == tenant)
            .map(|c| {
                let k = &c.container;
                (k.created_at, k.id.clone(), k.clone())
            })
            .collect();
        paged(rows, page)
    }

    async fn touch_container(
        &self,
        tenant: &str,
        id: &str,
        at: u64,
    ) -> Result<Option<Container>, StoreError> {
        let mut t = self.tables()?;
        Ok(t.owned_mut(tenant, id)
            .filter(|c| c.container.status == ContainerStatus::Running)
            .map(|c| {
                let last = c.container.last_active_at.unwrap_or(0).max(at);
                c.container.last_active_at = Some(last);
                c.container.clone()
            }))
    }

    async fn delete_container(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut t = self.tables()?;
        if t.owned(tenant, id).is_none() {
            return Ok(false);
        }
        t.containers.remove(id);
        Ok(true)
    }

    async fn put_container_file(
        &self,
        tenant: &str,
        file: &ContainerFile,
        bytes: &[u8],
    ) -> Result<bool, StoreError> {
        let mut t = self.tables()?;
        let Some(c) = t
            .owned_mut(tenant, &file.container_id)
            .filter(|c| c.container.status == ContainerStatus::Running)
        else {
            return Ok(false);
        };
        c.files.retain(|_, (f, _)| f.path != file.path);
        c.files
            .insert(file.id.clone(), (file.clone(), bytes.to_vec()));
        Ok(true)
    }

    async fn get_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<ContainerFile>, StoreError> {
        let t = self.tables()?;
        Ok(t.owned(tenant, container_id)
            .and_then(|c| c.files.get(file_id))
            .map(|(f, _)| f.clone()))
    }

    async fn container_file_content(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let t = self.tables()?;
        Ok(t.owned(tenant, container_id)
            .and_then(|c| c.files.get(file_id))
            .map(|(_, b)| b.clone()))
    }

    async fn list_container_files(
        &self,
        tenant: &str,
        container_id: &str,
        page: &ContainerListRequest,
    ) -> Result<Option<ContainerPage<ContainerFile>>, StoreError> {
        let t = self.tables()?;
        let Some(c) = t.owned(tenant, container_id) else {
            return Ok(None);
        };
        let rows = c
            .files
            .values()
            .map(|(f, _)| (f.created_at, f.id.clone(), f.clone()))
            .collect();
        paged(rows, page).map(Some)
    }

    async fn delete_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError> {
        let mut t = self.tables()?;
        Ok(t.owned_mut(tenant, container_id)
            .is_some_and(|c| c.files.remove(file_id).is_some()))
    }

    async fn expire_containers(&self, now: u64) -> Result<Vec<ExpiredContainer>, StoreError> {
        let mut t = self.tables()?;
        let mut expired = Vec::new();
        for (id, c) in t.containers.iter_mut() {
            let due = c.container.expires_at().is_some_and(|at| at <= now);
            if c.container.status == ContainerStatus::Running && due {
                c.container.status = ContainerStatus::Expired;
                c.files.clear();
                expired.push(ExpiredContainer {
                    tenant: c.tenant.clone(),
                    id: id.clone(),
                });
            }
        }
        Ok(expired)
    }
}

//! The live-run port of the in-memory store: the SQLite semantics, for tests
//! and single-process setups that keep nothing on disk.

use windlass_engine::{LiveRecord, LiveRun, RunStore, StoreError, StoredEvent, UnixMillis};

use crate::memory::MemoryStore;

#[async_trait::async_trait]
impl RunStore for MemoryStore {
    async fn put_live(&self, run: LiveRun<'_>) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let id = &run.response.id;
        if inner.is_stored(id) {
            return Err(StoreError::Duplicate(id.clone()));
        }
        if inner.live.get(id).is_some_and(|r| r.tenant != run.tenant) {
            return Err(StoreError::Duplicate(id.clone()));
        }
        inner.live.insert(
            id.clone(),
            LiveRecord {
                tenant: run.tenant.to_owned(),
                response: run.response.clone(),
                replica: run.replica.to_owned(),
                lease_until: run.lease_until,
                resume: run.resume.map(str::to_owned),
            },
        );
        Ok(())
    }

    async fn get_live(&self, tenant: &str, id: &str) -> Result<Option<LiveRecord>, StoreError> {
        let inner = self.lock()?;
        Ok(inner.live.get(id).filter(|r| r.tenant == tenant).cloned())
    }

    async fn renew_leases(
        &self,
        replica: &str,
        lease_until: UnixMillis,
    ) -> Result<u64, StoreError> {
        let mut inner = self.lock()?;
        let mut n = 0;
        for r in inner.live.values_mut().filter(|r| r.replica == replica) {
            r.lease_until = lease_until;
            n += 1;
        }
        Ok(n)
    }

    async fn claim_expired(
        &self,
        replica: &str,
        now: UnixMillis,
        lease_until: UnixMillis,
        limit: usize,
    ) -> Result<Vec<LiveRecord>, StoreError> {
        let mut inner = self.lock()?;
        let mut expired: Vec<&mut LiveRecord> = inner
            .live
            .values_mut()
            .filter(|r| r.lease_until < now)
            .collect();
        expired.sort_by_key(|r| (r.response.created_at, r.response.id.clone()));
        Ok(expired
            .into_iter()
            .take(limit)
            .map(|r| {
                r.replica = replica.to_owned();
                r.lease_until = lease_until;
                r.clone()
            })
            .collect())
    }

    async fn drop_live(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock()?;
        if inner.live.get(id).is_some_and(|r| r.tenant == tenant) {
            inner.live.remove(id);
            return Ok(true);
        }
        Ok(false)
    }

    async fn append_events(
        &self,
        tenant: &str,
        id: &str,
        events: &[StoredEvent],
    ) -> Result<(), StoreError> {
        let mut inner = self.lock()?;
        let (owner, stored) = inner
            .events
            .entry(id.to_owned())
            .or_insert_with(|| (tenant.to_owned(), Vec::new()));
        if owner != tenant {
            return Err(StoreError::Duplicate(id.to_owned()));
        }
        for e in events {
            if stored
                .last()
                .is_none_or(|l| l.sequence_number < e.sequence_number)
            {
                stored.push(e.clone());
            }
        }
        Ok(())
    }

    async fn events_after(
        &self,
        tenant: &str,
        id: &str,
        after: Option<u64>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let inner = self.lock()?;
        Ok(match inner.events.get(id) {
            Some((owner, events)) if owner == tenant => events
                .iter()
                .filter(|e| after.is_none_or(|a| e.sequence_number > a))
                .cloned()
                .collect(),
            _ => Vec::new(),
        })
    }
}

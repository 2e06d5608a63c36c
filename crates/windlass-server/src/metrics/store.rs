//! Store operation latency: a [`ResponseStore`] that times each call of
//! the store it wraps into `windlass_store_operation_duration_seconds`.
//! Every method is forwarded, default ones included, so wrapping changes
//! nothing but the timing.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use windlass_engine::{ItemPage, NewResponse, PageRequest, ResponseStore, StoreError, Trace};
use windlass_protocol::{Item, ResponseResource};

use super::Metrics;

pub struct TimedStore {
    inner: Arc<dyn ResponseStore>,
    metrics: Metrics,
}

impl TimedStore {
    /// `inner` itself when metrics are off: no wrapper, no cost.
    pub fn wrap(inner: Arc<dyn ResponseStore>, metrics: &Metrics) -> Arc<dyn ResponseStore> {
        if !metrics.is_enabled() {
            return inner;
        }
        Arc::new(TimedStore {
            inner,
            metrics: metrics.clone(),
        })
    }

    async fn timed<T>(&self, operation: &'static str, call: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let out = call.await;
        self.metrics.store_operation(operation, started.elapsed());
        out
    }
}

#[async_trait::async_trait]
impl ResponseStore for TimedStore {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        self.timed("save", self.inner.save(new)).await
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        self.timed("get", self.inner.get(tenant, id)).await
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        self.timed("load_context", self.inner.load_context(tenant, id))
            .await
    }

    async fn input_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        self.timed("input_items", self.inner.input_items(tenant, id, page))
            .await
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        self.timed("delete", self.inner.delete(tenant, id)).await
    }

    async fn find_item(&self, tenant: &str, item_id: &str) -> Result<Option<Item>, StoreError> {
        self.timed("find_item", self.inner.find_item(tenant, item_id))
            .await
    }

    async fn trace(&self, tenant: &str, response_id: &str) -> Result<Option<Trace>, StoreError> {
        self.timed("trace", self.inner.trace(tenant, response_id))
            .await
    }

    async fn prune(&self, created_before: u64) -> Result<u64, StoreError> {
        self.timed("prune", self.inner.prune(created_before)).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.timed("ping", self.inner.ping()).await
    }
}

//! Responses being generated right now: for the cancel endpoint, `GET` while
//! running, and cancelling everything at shutdown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use windlass_protocol::ResponseResource;

struct Entry {
    /// The owner tenant: to every other tenant the entry does not exist.
    tenant: String,
    cancel: CancellationToken,
    /// The response as it stood at the start, until the final one arrives.
    latest: watch::Receiver<Option<ResponseResource>>,
    start: ResponseResource,
}

#[derive(Clone, Default)]
pub struct Inflight {
    inner: Arc<Mutex<HashMap<String, Entry>>>,
}

/// Held by the task that runs a response; reports its end.
pub struct Registration {
    registry: Inflight,
    id: String,
    done: watch::Sender<Option<ResponseResource>>,
}

impl Registration {
    /// Unregisters, then publishes the final response to whoever is waiting
    /// on a cancel. Receivers are only handed out through the registry, so
    /// once unregistered none can appear: the response is cloned only when
    /// a canceller is actually waiting (late cancellers read the store).
    pub fn finish(mut self, response: &ResponseResource) {
        self.unregister();
        if self.done.receiver_count() > 0 {
            let _ = self.done.send(Some(response.clone()));
        }
    }

    fn unregister(&mut self) {
        self.registry.map().remove(&self.id);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.unregister();
    }
}

impl Inflight {
    /// The registry; a panic elsewhere while it was held leaves the map
    /// usable (each change is one insert or remove), so poisoning is ignored.
    fn map(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn register(
        &self,
        tenant: &str,
        start: &ResponseResource,
        cancel: CancellationToken,
    ) -> Registration {
        let (tx, rx) = watch::channel(None);
        self.map().insert(
            start.id.clone(),
            Entry {
                tenant: tenant.to_owned(),
                cancel,
                latest: rx,
                start: start.clone(),
            },
        );
        Registration {
            registry: self.clone(),
            id: start.id.clone(),
            done: tx,
        }
    }

    /// The starting snapshot of `tenant`'s running response.
    pub fn snapshot(&self, tenant: &str, id: &str) -> Option<ResponseResource> {
        let map = self.map();
        owned(&map, tenant, id).map(|e| e.start.clone())
    }

    pub fn contains(&self, tenant: &str, id: &str) -> bool {
        owned(&self.map(), tenant, id).is_some()
    }

    /// Cancels `tenant`'s running response; returns a receiver for its final
    /// state.
    pub fn cancel(
        &self,
        tenant: &str,
        id: &str,
    ) -> Option<watch::Receiver<Option<ResponseResource>>> {
        let map = self.map();
        let e = owned(&map, tenant, id)?;
        e.cancel.cancel();
        Some(e.latest.clone())
    }

    pub fn cancel_all(&self) -> usize {
        let map = self.map();
        for e in map.values() {
            e.cancel.cancel();
        }
        map.len()
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The entry `id` if `tenant` owns it.
fn owned<'m>(map: &'m HashMap<String, Entry>, tenant: &str, id: &str) -> Option<&'m Entry> {
    map.get(id).filter(|e| e.tenant == tenant)
}

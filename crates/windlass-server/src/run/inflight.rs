//! Responses being generated right now: for the cancel endpoint, `GET` while
//! running, stream resume, and cancelling everything at shutdown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;
use windlass_engine::CancelAck;
use windlass_protocol::{ResponseResource, ResponseStatus};

use crate::run::log::EventLog;

struct Entry {
    /// The owner tenant: to every other tenant the entry does not exist.
    tenant: String,
    /// Its stream events, when the stream can be resumed.
    log: Option<Arc<EventLog>>,
    cancel: CancellationToken,
    /// The response as it stood at the start, until the final one arrives.
    latest: watch::Receiver<Option<ResponseResource>>,
    start: ResponseResource,
}

#[derive(Clone, Default)]
pub struct Inflight {
    inner: Arc<Mutex<HashMap<String, Entry>>>,
    /// Woken whenever the last running response ends (shutdown waits on it).
    idle: Arc<Notify>,
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
        let mut map = self.registry.map();
        if map.remove(&self.id).is_some() && map.is_empty() {
            self.registry.idle.notify_waiters();
        }
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
        self.register_logged(tenant, start, cancel, None)
    }

    /// [`register`](Self::register) with the run's event log, for resumers.
    pub fn register_logged(
        &self,
        tenant: &str,
        start: &ResponseResource,
        cancel: CancellationToken,
        log: Option<Arc<EventLog>>,
    ) -> Registration {
        let (tx, rx) = watch::channel(None);
        self.map().insert(
            start.id.clone(),
            Entry {
                tenant: tenant.to_owned(),
                log,
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

    /// The starting snapshot of `tenant`'s running response (with its
    /// current status for a background one).
    pub fn snapshot(&self, tenant: &str, id: &str) -> Option<ResponseResource> {
        let map = self.map();
        owned(&map, tenant, id).map(|e| e.start.clone())
    }

    /// A queued (background) response started running.
    pub fn set_status(&self, id: &str, status: ResponseStatus) {
        if let Some(e) = self.map().get_mut(id) {
            e.start.status = status;
        }
    }

    /// The event log of `tenant`'s running response, if it can be resumed.
    pub fn log(&self, tenant: &str, id: &str) -> Option<Arc<EventLog>> {
        owned(&self.map(), tenant, id).and_then(|e| e.log.clone())
    }

    /// Every event log (for the periodic flush).
    pub fn logs(&self) -> Vec<Arc<EventLog>> {
        self.map().values().filter_map(|e| e.log.clone()).collect()
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

    /// Cancels `tenant`'s running response for another process (the cancel
    /// bus), answering whether its final state will be stored.
    pub fn cancel_for_bus(&self, tenant: &str, id: &str) -> CancelAck {
        let map = self.map();
        match owned(&map, tenant, id) {
            None => CancelAck::Unclaimed,
            Some(e) => {
                e.cancel.cancel();
                match e.start.store {
                    true => CancelAck::Stored,
                    false => CancelAck::Unstored,
                }
            }
        }
    }

    pub fn cancel_all(&self) -> usize {
        let map = self.map();
        let mut n = 0;
        for e in map.values().filter(|e| !e.start.background) {
            e.cancel.cancel();
            n += 1;
        }
        n
    }

    /// Resolves once no response is running (at once if none is).
    pub async fn wait_empty(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            // Registered before the check, so an end in between is not lost.
            idle.as_mut().enable();
            if self.is_empty() {
                return;
            }
            idle.await;
        }
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

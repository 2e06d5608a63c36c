//! The stream events of one running response, kept in memory so a client can
//! resume the stream (`GET /v1/responses/{id}?stream=true`) while it runs,
//! and written to the run store when the stream must outlive the process:
//! for background responses (every lease tick and at the end) and for a
//! stream whose client left (at the end). A stream read to its end by its
//! client writes nothing.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use windlass_engine::{RunStore, StoredEvent};

#[derive(Default)]
struct State {
    events: Vec<StoredEvent>,
    /// How many of `events` are in the store.
    flushed: usize,
    /// The run has ended: no event will follow.
    ended: bool,
    /// Whether the events go to the store.
    persist: bool,
}

pub struct EventLog {
    pub tenant: String,
    pub id: String,
    state: Mutex<State>,
    /// Bumped on every append and at the end; followers wait on it.
    version: watch::Sender<u64>,
}

impl EventLog {
    pub fn new(tenant: &str, id: &str, persist: bool) -> Arc<EventLog> {
        Arc::new(EventLog {
            tenant: tenant.to_owned(),
            id: id.to_owned(),
            state: Mutex::new(State {
                persist,
                ..State::default()
            }),
            version: watch::channel(0).0,
        })
    }

    /// Each change is one push or flag, so a panic elsewhere leaves it usable.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn push(&self, sequence_number: u64, json: String) {
        self.state().events.push(StoredEvent {
            sequence_number,
            json,
        });
        self.version.send_modify(|v| *v += 1);
    }

    /// The client of the original stream left: keep its events.
    pub fn persist(&self) {
        self.state().persist = true;
    }

    pub fn end(&self) {
        self.state().ended = true;
        self.version.send_modify(|v| *v += 1);
    }

    /// Events numbered above `after` (`None`: all), and whether the run has
    /// ended (read together, so no event is missed between the two).
    pub fn after(&self, after: Option<u64>) -> (Vec<StoredEvent>, bool) {
        let state = self.state();
        let start = match after {
            None => 0,
            Some(a) => state.events.partition_point(|e| e.sequence_number <= a),
        };
        (state.events[start..].to_vec(), state.ended)
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// Writes events not yet stored (when the log persists). A failed write
    /// is retried on the next flush.
    pub async fn flush(&self, runs: &dyn RunStore) {
        let (pending, upto) = {
            let state = self.state();
            if !state.persist || state.flushed == state.events.len() {
                return;
            }
            (state.events[state.flushed..].to_vec(), state.events.len())
        };
        match runs.append_events(&self.tenant, &self.id, &pending).await {
            Ok(()) => {
                let mut state = self.state();
                state.flushed = state.flushed.max(upto);
            }
            Err(e) => tracing::warn!(id = %self.id, error = %e, "could not store stream events"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_returns_only_later_events_and_the_end_flag() {
        let log = EventLog::new("default", "resp_1", false);
        for n in 0..4 {
            log.push(n, format!("{{\"n\":{n}}}"));
        }
        let (events, ended) = log.after(Some(1));
        let seqs: Vec<u64> = events.iter().map(|e| e.sequence_number).collect();
        assert_eq!(seqs, [2, 3]);
        assert!(!ended);
        log.end();
        let (events, ended) = log.after(Some(3));
        assert!(events.is_empty() && ended);
        assert_eq!(log.after(None).0.len(), 4);
    }

    #[tokio::test]
    async fn only_a_persisting_log_is_flushed_and_each_event_once() {
        let store = windlass_store::MemoryStore::new();
        let log = EventLog::new("default", "resp_1", false);
        log.push(0, "{}".into());
        log.flush(&store).await;
        let stored = store.events_after("default", "resp_1", None).await;
        assert!(stored.expect("read").is_empty());
        log.persist();
        log.flush(&store).await;
        log.push(1, "{}".into());
        log.flush(&store).await;
        log.flush(&store).await;
        let stored = store.events_after("default", "resp_1", None).await;
        let seqs: Vec<u64> = stored
            .expect("read")
            .iter()
            .map(|e| e.sequence_number)
            .collect();
        assert_eq!(seqs, [0, 1]);
    }
}

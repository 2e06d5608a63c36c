//! Metric handles kept per label set. Registering a handle builds its key
//! (a string per label) and hashes it into the exporter's registry; a
//! response records a handful of samples, and doing that for each cost
//! more than the samples themselves. Label values are bounded (see
//! `labels.rs`), so these maps are too.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Histogram};

/// Handles by label set; `make` registers one the first time.
pub(crate) struct Handles<K, H> {
    map: Mutex<HashMap<K, H>>,
}

impl<K, H> Default for Handles<K, H> {
    fn default() -> Self {
        Handles {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq, H: Clone> Handles<K, H> {
    pub(super) fn get(&self, key: K, make: impl FnOnce() -> H) -> H {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(h) = map.get(&key) {
            return h.clone();
        }
        let h = make();
        map.insert(key, h.clone());
        h
    }
}

/// A response's labels: model, key name, status and surface.
pub(crate) type ResponseKey = (Arc<str>, Arc<str>, &'static str, super::Surface);

/// A response's end, per model, key name, status and surface.
#[derive(Clone)]
pub(crate) struct ResponseHandles {
    pub count: Counter,
    pub duration: Histogram,
    pub turns: Histogram,
}

/// One upstream call, per model and failure code.
#[derive(Clone)]
pub(crate) struct TurnHandles {
    pub duration: Histogram,
    pub input_tokens: Histogram,
    pub output_tokens: Histogram,
}

/// Every cache of the server's metrics.
#[derive(Default)]
pub(crate) struct Cache {
    pub responses: Handles<ResponseKey, ResponseHandles>,
    pub turns: Handles<(Arc<str>, Option<&'static str>), TurnHandles>,
    pub first_token: Handles<(Arc<str>, Arc<str>), Histogram>,
    pub tools: Handles<(Arc<str>, &'static str), Histogram>,
    pub store: Handles<&'static str, Histogram>,
}

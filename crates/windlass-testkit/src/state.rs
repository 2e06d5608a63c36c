//! State shared between the [`FakeUpstream`](crate::FakeUpstream) handle and
//! the request handlers: the reply script, the request log and counters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::http::HeaderMap;
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::reply::Reply;

/// One chat-completions request as received by the fake upstream.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// Request headers (e.g. `authorization`, `content-type`).
    pub headers: HeaderMap,
    /// The parsed JSON body; a JSON string holding the raw text when the body
    /// was not valid JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// A header value as text, if present and valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Locks a mutex, ignoring poisoning (a panicking test thread must not hide
/// the state from the other assertions).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct Shared {
    pub queue: Mutex<VecDeque<Arc<Reply>>>,
    pub default: Mutex<Arc<Reply>>,
    pub requests: Mutex<Vec<RecordedRequest>>,
    pub record: AtomicBool,
    pub request_count: AtomicUsize,
    pub disconnects: AtomicUsize,
    /// Notified whenever a request arrives or a disconnect is counted.
    pub changed: Notify,
    pub models: Mutex<Vec<String>>,
    pub next_call_id: AtomicU64,
    pub next_response_id: AtomicU64,
    /// Cancelled on shutdown: stalls and delays end early.
    pub cancel: CancellationToken,
    /// Unix seconds at start, used as the models' `created`.
    pub started: u64,
}

impl Shared {
    pub(crate) fn new() -> Self {
        Shared {
            queue: Mutex::new(VecDeque::new()),
            default: Mutex::new(Arc::new(Reply::default())),
            requests: Mutex::new(Vec::new()),
            record: AtomicBool::new(true),
            request_count: AtomicUsize::new(0),
            disconnects: AtomicUsize::new(0),
            changed: Notify::new(),
            models: Mutex::new(vec!["fake-model".to_owned()]),
            next_call_id: AtomicU64::new(1),
            next_response_id: AtomicU64::new(1),
            cancel: CancellationToken::new(),
            started: unix_now(),
        }
    }

    /// Logs a request (before any reply is produced).
    pub(crate) fn record(&self, headers: HeaderMap, body: Value) {
        if self.record.load(Ordering::Relaxed) {
            lock(&self.requests).push(RecordedRequest { headers, body });
        }
        self.request_count.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// The next scripted reply, or the default one.
    pub(crate) fn next_reply(&self) -> Arc<Reply> {
        let next = lock(&self.queue).pop_front();
        next.unwrap_or_else(|| lock(&self.default).clone())
    }

    /// Waits until `cond` holds (re-checked on every change notification).
    pub(crate) async fn wait_until(
        &self,
        cond: impl Fn(&Shared) -> bool,
        timeout: Duration,
    ) -> bool {
        let wait = async {
            loop {
                let notified = self.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if cond(self) {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Counts a reply as abandoned by the client unless [`disarm`](Self::disarm)ed
/// before being dropped.
pub(crate) struct DisconnectGuard {
    shared: Option<Arc<Shared>>,
}

impl DisconnectGuard {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        DisconnectGuard {
            shared: Some(shared),
        }
    }

    /// The reply was delivered (or ended on purpose): dropping no longer counts.
    pub(crate) fn disarm(&mut self) {
        self.shared = None;
    }
}

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.disconnects.fetch_add(1, Ordering::SeqCst);
            shared.changed.notify_waiters();
        }
    }
}

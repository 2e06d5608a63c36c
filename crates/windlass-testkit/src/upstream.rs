//! [`FakeUpstream`]: the handle to a running fake server.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::serve::ListenerExt as _;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::reply::Reply;
use crate::server::router;
use crate::state::{lock, RecordedRequest, Shared};

/// How long [`FakeUpstream::shutdown`] waits for connections to wind down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running fake OpenAI-compatible server on a random loopback port.
///
/// Cheap to clone (all clones drive the same server). The server stops when
/// the last clone is dropped or [`shutdown`](Self::shutdown) is called.
#[derive(Clone)]
pub struct FakeUpstream {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    addr: SocketAddr,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.cancel.cancel();
    }
}

impl std::fmt::Debug for FakeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeUpstream")
            .field("addr", &self.inner.addr)
            .field("requests", &self.request_count())
            .finish()
    }
}

impl FakeUpstream {
    /// Binds `127.0.0.1:0` and serves on the current tokio runtime.
    ///
    /// # Panics
    /// If the socket cannot be bound (see [`try_start`](Self::try_start)).
    pub async fn start() -> FakeUpstream {
        FakeUpstream::try_start()
            .await
            .expect("windlass-testkit: cannot bind the fake upstream")
    }

    /// Like [`start`](Self::start), returning bind errors.
    pub async fn try_start() -> std::io::Result<FakeUpstream> {
        // reqwest is built without a crypto provider of its own: a test's
        // own `reqwest::Client` needs the process one installed first.
        windlass_providers::install_crypto_provider();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new());
        let app = router(shared.clone());
        let stop = shared.cancel.clone();
        // Small SSE frames must leave at once (no Nagle batching): the
        // benchmark harness measures time to first token and pacing.
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "windlass-testkit: cannot set TCP_NODELAY");
            }
        });
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "windlass-testkit: fake upstream stopped");
            }
        });
        Ok(FakeUpstream {
            inner: Arc::new(Inner {
                shared,
                addr,
                task: Mutex::new(Some(task)),
            }),
        })
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// `http://127.0.0.1:PORT/v1` (the OpenAI "base URL").
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.inner.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// Queues a reply; each `POST /v1/chat/completions` pops the next one (FIFO).
    pub fn push(&self, reply: Reply) {
        lock(&self.shared().queue).push_back(Arc::new(reply));
    }

    /// Queues several replies, in order.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.shared().queue).extend(replies.into_iter().map(Arc::new));
    }

    /// The reply used when the queue is empty (initially a 500 error saying
    /// "no scripted reply").
    pub fn set_default(&self, reply: Reply) {
        *lock(&self.shared().default) = Arc::new(reply);
    }

    /// How many queued replies have not been served yet.
    pub fn pending_replies(&self) -> usize {
        lock(&self.shared().queue).len()
    }

    /// Every chat-completions request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared().requests)
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// The contents of the `role: tool` messages of the `i`-th request:
    /// the tool results the model was shown.
    pub fn tool_messages(&self, i: usize) -> Vec<String> {
        self.requests()[i]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Every chat-completions request with its headers, in order.
    pub fn recorded_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared().requests).clone()
    }

    /// The most recent request body.
    pub fn last_request(&self) -> Option<Value> {
        lock(&self.shared().requests).last().map(|r| r.body.clone())
    }

    /// The most recent request with its headers.
    pub fn last_recorded_request(&self) -> Option<RecordedRequest> {
        lock(&self.shared().requests).last().cloned()
    }

    /// Number of chat-completions requests received (counted even when
    /// recording is off).
    pub fn request_count(&self) -> usize {
        self.shared().request_count.load(Ordering::SeqCst)
    }

    /// Forgets the recorded requests (the count is kept).
    pub fn clear_requests(&self) {
        lock(&self.shared().requests).clear();
    }

    /// Turns request recording on or off (on by default). Benchmarks driving
    /// many requests can switch it off to keep memory flat.
    pub fn set_record_requests(&self, on: bool) {
        self.shared().record.store(on, Ordering::Relaxed);
    }

    /// How many replies were abandoned by the client before their end: a
    /// streamed body dropped early, or the connection closed while the
    /// server was still waiting (`first_byte_delay`, `stall`).
    pub fn disconnects(&self) -> usize {
        self.shared().disconnects.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` disconnects were counted; `false` on timeout.
    pub async fn wait_for_disconnects(&self, n: usize, timeout: Duration) -> bool {
        self.shared()
            .wait_until(|s| s.disconnects.load(Ordering::SeqCst) >= n, timeout)
            .await
    }

    /// Waits until at least `n` requests were received; `false` on timeout.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.shared()
            .wait_until(|s| s.request_count.load(Ordering::SeqCst) >= n, timeout)
            .await
    }

    /// Model ids listed by `GET /v1/models` (default `["fake-model"]`).
    pub fn set_models(&self, ids: Vec<String>) {
        *lock(&self.shared().models) = ids;
    }

    /// Stops the server: stalled and delayed replies end at once, then the
    /// server waits (a few seconds at most) for connections to close.
    pub async fn shutdown(self) {
        self.shared().cancel.cancel();
        let task = lock(&self.inner.task).take();
        if let Some(mut task) = task {
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

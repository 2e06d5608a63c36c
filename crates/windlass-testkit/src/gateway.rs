//! A real Windlass server on a loopback port, in front of a [`FakeUpstream`],
//! with a SQLite file: what integration tests talk to over HTTP.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use windlass_engine::{
    Engine, EngineConfig, LoopMode, McpHub, ModelProvider, Policy, ToolExecutor,
};
use windlass_providers::{provider_for, ChatProviderConfig, UpstreamKind};
use windlass_server::{AppState, McpDirectory, Metrics, ServerConfig, TimedStore};
use windlass_store::SqliteStore;

use crate::http::{content_type, send};
use crate::live::LiveStream;
use crate::sse_check::SseCapture;
use crate::upstream::FakeUpstream;

/// How to build the gateway under test.
#[derive(Clone)]
pub struct GatewayOptions {
    pub engine: EngineConfig,
    /// Server-side executors, registered before the client-function one.
    pub executors: Vec<Arc<dyn ToolExecutor>>,
    /// Calls to the request's function tools go back to the client
    /// (`requires_action`); false with no executors and no MCP hub: the
    /// engine runs single-shot.
    pub client_functions: bool,
    pub policy: Option<Arc<dyn Policy>>,
    /// MCP hub (enables `mcp` tools) and the view `GET /v1/mcp/servers` shows.
    pub mcp: Option<Arc<dyn McpHub>>,
    pub mcp_directory: Option<Arc<dyn McpDirectory>>,
    pub server: ServerConfig,
    pub provider: ChatProviderConfig,
    /// The wire format Windlass speaks to the fake upstream.
    pub kind: UpstreamKind,
    /// A ready provider (e.g. a router over several fake upstreams) used
    /// instead of one built from `provider` and `kind`.
    pub model_provider: Option<Arc<dyn ModelProvider>>,
    /// SQLite file; a fresh temp file when `None`.
    pub db: Option<PathBuf>,
}

impl GatewayOptions {
    /// The opt-in mode: a pause for the client ends `requires_action` with
    /// `response.requires_action` (the default is OpenAI's `completed`).
    pub fn requires_action() -> Self {
        let mut options = GatewayOptions::default();
        options.engine.client_tools_status = windlass_engine::ClientToolsStatus::RequiresAction;
        options
    }
}

impl Default for GatewayOptions {
    fn default() -> Self {
        let mut provider = ChatProviderConfig::new("http://unused");
        provider.max_retries = 0;
        provider.first_byte_timeout = Duration::from_secs(10);
        provider.idle_timeout = Duration::from_secs(10);
        GatewayOptions {
            engine: EngineConfig::default(),
            executors: Vec::new(),
            client_functions: true,
            policy: None,
            mcp: None,
            mcp_directory: None,
            // As `windlass serve` runs by default: each connection on one of
            // two threads of its own (tests that set `server` whole run on
            // the test's runtime instead, so both ways are covered).
            server: ServerConfig {
                connection_threads: 2,
                ..ServerConfig::default()
            },
            provider,
            kind: UpstreamKind::Chat,
            model_provider: None,
            db: None,
        }
    }
}

pub struct Gateway {
    /// e.g. `http://127.0.0.1:PORT`
    pub base: String,
    pub upstream: FakeUpstream,
    pub client: reqwest::Client,
    pub db: PathBuf,
    pub state: AppState,
    opts: GatewayOptions,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

fn temp_db() -> PathBuf {
    let n: u64 = rand::rng().random();
    std::env::temp_dir().join(format!("windlass-test-{n:016x}.db"))
}

impl Gateway {
    pub async fn start() -> Gateway {
        Gateway::start_with(GatewayOptions::default()).await
    }

    pub async fn start_with(opts: GatewayOptions) -> Gateway {
        let upstream = FakeUpstream::start().await;
        Gateway::start_on(upstream, opts).await
    }

    /// Starts a gateway in front of an existing upstream (e.g. after a restart).
    pub async fn start_on(upstream: FakeUpstream, mut opts: GatewayOptions) -> Gateway {
        let db = opts.db.clone().unwrap_or_else(temp_db);
        opts.db = Some(db.clone());
        let mut pcfg = opts.provider.clone();
        pcfg.base_url = upstream.base_url();
        let provider = match &opts.model_provider {
            Some(p) => p.clone(),
            None => provider_for(opts.kind, pcfg).expect("provider"),
        };
        let metrics = Metrics::from_config(&opts.server.metrics);
        let sqlite = Arc::new(
            SqliteStore::open(db.to_str().expect("utf-8 temp path"))
                .await
                .expect("sqlite store"),
        );
        let store = TimedStore::wrap(sqlite.clone(), &metrics);
        let mut engine = opts.engine.clone();
        if !opts.client_functions && opts.executors.is_empty() && opts.mcp.is_none() {
            engine.loop_mode = LoopMode::SingleShot;
        }
        let mut builder = Engine::builder(provider, store)
            .conversations(sqlite.clone())
            .config(engine);
        for e in &opts.executors {
            builder = builder.executor(e.clone());
        }
        if let Some(p) = &opts.policy {
            builder = builder.policy(p.clone());
        }
        if let Some(hub) = &opts.mcp {
            builder = builder.mcp(hub.clone());
        }
        let mut state = AppState::new(builder.build(), opts.server.clone())
            .with_prompts(sqlite.clone())
            .with_runs(sqlite)
            .with_metrics(metrics);
        if let Some(d) = &opts.mcp_directory {
            state = state.with_mcp(d.clone());
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = oneshot::channel::<()>();
        let serve_state = state.clone();
        let task = tokio::spawn(async move {
            let _ = windlass_server::serve(listener, serve_state, async {
                let _ = rx.await;
            })
            .await;
        });
        Gateway {
            base: format!("http://{addr}"),
            upstream,
            client: reqwest::Client::new(),
            db,
            state,
            opts,
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Stops the server (running responses end `cancelled`) and starts a new
    /// one on the same SQLite file and upstream.
    pub async fn restart(mut self) -> Gateway {
        self.stop_server().await;
        let opts = self.opts.clone();
        Gateway::start_on(self.upstream.clone(), opts).await
    }

    async fn stop_server(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
    }

    pub async fn stop(mut self) {
        self.stop_server().await;
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        send(self.client.post(self.url(path)).json(body)).await
    }

    /// POSTs raw bytes with a JSON content type (for malformed-body tests).
    pub async fn post_raw(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let req = self.client.post(self.url(path));
        send(req.header("content-type", "application/json").body(body)).await
    }

    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        send(self.client.get(self.url(path))).await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        send(self.client.delete(self.url(path))).await
    }

    /// `POST /v1/responses` with one extra request header; returns the
    /// status, the content type and the raw body (JSON or SSE).
    pub async fn create_with_header(
        &self,
        body: &Value,
        name: &str,
        value: &str,
    ) -> (u16, String, String) {
        let resp = self
            .client
            .post(self.url("/v1/responses"))
            .header(name, value)
            .json(body)
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        let content_type = content_type(&resp);
        (status, content_type, resp.text().await.expect("body"))
    }

    /// `POST /v1/responses` with `stream: true`, read to the end.
    pub async fn stream(&self, body: &Value) -> SseCapture {
        LiveStream::open(self, body).await.read_to_end().await
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

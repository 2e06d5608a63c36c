//! The state every handler and middleware reads: the engine, the running
//! responses, the configuration and the server's shared services.

use std::sync::Arc;

use serde_json::Value;
use windlass_engine::{CancelBus, Engine, LocalCancelBus, PromptStore, QuotaCounter, RunStore};

use crate::config::ServerConfig;
use crate::guard::keys::{KeyError, KeyRing};
use crate::guard::quota::InProcessQuota;
use crate::lifecycle::Lifecycle;
use crate::metrics::Metrics;
use crate::resources::Resources;
use crate::run::background::Background;
use crate::run::inflight::Inflight;
use crate::run::notify::ResponseNotifier;

/// Where the view of `GET /v1/mcp/servers` comes from; the binary plugs its
/// MCP adapter in. The entries are wire JSON: label, transport, state, last
/// error, tools; never headers or tokens.
pub trait McpDirectory: Send + Sync {
    fn servers(&self) -> Vec<Value>;
}

/// Cloned by every middleware layer and extractor of every request, so a
/// clone is one reference count: the fields live behind one `Arc` and are
/// read through `Deref`; the `with_*` builders change them before serving.
#[derive(Clone)]
pub struct AppState(Arc<AppShared>);

/// What [`AppState`] holds.
#[derive(Clone)]
pub struct AppShared {
    pub engine: Engine,
    pub inflight: Inflight,
    pub config: Arc<ServerConfig>,
    /// Configured MCP servers, for `GET /v1/mcp/servers`.
    pub mcp: Option<Arc<dyn McpDirectory>>,
    /// The accepted keys; a configuration that does not resolve refuses
    /// every request but the probes (the binary refuses to start instead).
    pub keys: Arc<Result<KeyRing, KeyError>>,
    /// Listening on loopback only: `Host` must be a loopback name.
    pub loopback: bool,
    /// Reaches responses running in other replicas (cancel, delete).
    pub cancel_bus: Arc<dyn CancelBus>,
    /// Live runs and stored stream events (background mode, stream
    /// resume); normally the engine's response store. `None`: background
    /// requests are refused.
    pub runs: Option<Arc<dyn RunStore>>,
    /// Background mode: this replica's id, leases and workers.
    pub background: Arc<Background>,
    /// Served at `GET /metrics`; disabled by `[server.metrics] enabled = false`.
    pub metrics: Metrics,
    /// Request/token budgets per key and tenant (in process by default).
    pub quota: Arc<dyn QuotaCounter>,
    /// Draining after a shutdown signal: not ready, new requests refused.
    pub lifecycle: Lifecycle,
    /// Stored prompt templates (`/v1/prompts`, `prompt` on create);
    /// `None`: both are refused.
    pub prompts: Option<Arc<dyn PromptStore>>,
    /// Told when a background response ends (completion webhooks).
    pub notifier: Option<Arc<dyn ResponseNotifier>>,
    /// Bearer JWTs of an OIDC issuer accepted as keys (`[auth.oidc]`).
    pub jwt: Option<Arc<windlass_auth::JwtVerifier>>,
    /// Served at `/mcp` behind the key guard (the binary builds it: the
    /// gateway's MCP servers and built-ins as one governed MCP server).
    pub mcp_endpoint: Option<axum::Router>,
    /// Files, vector stores, containers, embeddings; `None`: their routes
    /// answer 404 and no ingestion worker runs.
    pub resources: Option<Arc<Resources>>,
}

impl std::ops::Deref for AppState {
    type Target = AppShared;

    fn deref(&self) -> &AppShared {
        &self.0
    }
}

impl AppState {
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        let background = Arc::new(Background::new(&config.background));
        AppState(Arc::new(AppShared {
            engine,
            inflight: Inflight::default(),
            keys: Arc::new(config.key_ring()),
            metrics: Metrics::from_config(&config.metrics),
            config: Arc::new(config),
            mcp: None,
            loopback: false,
            cancel_bus: Arc::new(LocalCancelBus),
            runs: None,
            background,
            quota: Arc::new(InProcessQuota::new()),
            lifecycle: Lifecycle::default(),
            prompts: None,
            notifier: None,
            jwt: None,
            mcp_endpoint: None,
            resources: None,
        }))
    }

    /// The fields, to change while building (a clone taken earlier keeps
    /// what it had, as a clone of a plain struct would).
    pub(crate) fn shared_mut(&mut self) -> &mut AppShared {
        Arc::make_mut(&mut self.0)
    }

    /// Serves `endpoint` (a router answering `/mcp`) at `/mcp`, behind the
    /// same guard layers as the API: the request carries its
    /// [`AuthedKey`](crate::AuthedKey) when it reaches the endpoint.
    pub fn with_mcp_endpoint(mut self, endpoint: axum::Router) -> Self {
        self.shared_mut().mcp_endpoint = Some(endpoint);
        self
    }

    /// Accepts bearer JWTs `verifier` verifies, beside the static keys
    /// (authentication is then required even with no static key).
    pub fn with_jwt(mut self, verifier: Arc<windlass_auth::JwtVerifier>) -> Self {
        self.shared_mut().jwt = Some(verifier);
        self
    }

    /// Uses `metrics` (e.g. the one the store was wrapped with, see
    /// [`TimedStore`](crate::metrics::store::TimedStore)) instead of a fresh
    /// one.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.shared_mut().metrics = metrics;
        self
    }

    /// Counts quotas in `counter` (e.g. shared by replicas through Postgres).
    pub fn with_quota(mut self, counter: Arc<dyn QuotaCounter>) -> Self {
        self.shared_mut().quota = counter;
        self
    }

    /// Shares cancels with the other replicas on `bus`: cancels published
    /// there stop this process's runs, and cancels of responses not running
    /// here are published.
    pub fn with_cancel_bus(mut self, bus: Arc<dyn CancelBus>) -> Self {
        let inflight = self.inflight.clone();
        bus.subscribe(Arc::new(move |tenant: &str, id: &str| {
            inflight.cancel_for_bus(tenant, id)
        }));
        self.shared_mut().cancel_bus = bus;
        self
    }

    /// Keeps live runs and stream events in `runs` (the same store as the
    /// engine's, so a final save replaces the live row).
    pub fn with_runs(mut self, runs: Arc<dyn RunStore>) -> Self {
        self.shared_mut().runs = Some(runs);
        self
    }

    /// Enables the prompts API and `prompt` on create, kept in `store`.
    pub fn with_prompts(mut self, store: Arc<dyn PromptStore>) -> Self {
        self.shared_mut().prompts = Some(store);
        self
    }

    /// Tells `notifier` about every background response that ends.
    pub fn with_notifier(mut self, notifier: Arc<dyn ResponseNotifier>) -> Self {
        self.shared_mut().notifier = Some(notifier);
        self
    }

    /// Serves the resource routes over `resources`; `serve` runs their
    /// ingestion worker.
    pub fn with_resources(mut self, resources: Resources) -> Self {
        self.shared_mut().resources = Some(Arc::new(resources));
        self
    }

    pub fn with_mcp(mut self, directory: Arc<dyn McpDirectory>) -> Self {
        self.shared_mut().mcp = Some(directory);
        self
    }
}

//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.

mod admission;
mod auth;
mod body;
mod browser;
mod client_tools_status;
mod compact;
mod completion;
pub mod config;
mod consistency;
mod conversations;
mod create;
pub mod error;
mod in_place;
pub mod inflight;
mod item_list;
mod keepalive;
pub mod keys;
pub mod lifecycle;
pub mod limits;
mod listen;
pub mod logging;
mod mcp;
mod meta;
pub mod metrics;
pub mod quota;
mod quota_gate;
mod remote;
pub mod request_context;
mod resources;
pub mod runs;
pub mod scopes;
pub mod sse;
pub mod tenant;
mod ws;

use std::future::Future;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;
use windlass_engine::{CancelBus, Engine, LocalCancelBus, QuotaCounter, RunStore};

pub use config::{ConnectionLimits, MetricsConfig, ServerConfig, ServerFile, SettingsError};
pub use error::ApiError;
pub use inflight::Inflight;
pub use keys::{ApiKey, AuthedKey, KeyConfig, KeyError, KeyRing};
pub use lifecycle::Lifecycle;
pub use limits::RequestLimits;
pub use mcp::McpDirectory;
pub use metrics::store::TimedStore;
pub use metrics::Metrics;
pub use quota::InProcessQuota;
pub use request_context::{RequestContext, REQUEST_ID};
pub use tenant::Tenant;

#[derive(Clone)]
pub struct AppState {
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
    pub background: Arc<runs::Background>,
    /// Served at `GET /metrics`; disabled by `[server.metrics] enabled = false`.
    pub metrics: Metrics,
    /// Request/token budgets per key and tenant (in process by default).
    pub quota: Arc<dyn QuotaCounter>,
    /// Draining after a shutdown signal: not ready, new requests refused.
    pub lifecycle: Lifecycle,
}

impl AppState {
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        let background = Arc::new(runs::Background::new(&config.background));
        AppState {
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
        }
    }

    /// Uses `metrics` (e.g. the one the store was wrapped with, see
    /// [`TimedStore`]) instead of a fresh one.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Counts quotas in `counter` (e.g. shared by replicas through Postgres).
    pub fn with_quota(mut self, counter: Arc<dyn QuotaCounter>) -> Self {
        self.quota = counter;
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
        self.cancel_bus = bus;
        self
    }

    /// Keeps live runs and stream events in `runs` (the same store as the
    /// engine's, so a final save replaces the live row).
    pub fn with_runs(mut self, runs: Arc<dyn RunStore>) -> Self {
        self.runs = Some(runs);
        self
    }

    pub fn with_mcp(mut self, directory: Arc<dyn McpDirectory>) -> Self {
        self.mcp = Some(directory);
        self
    }
}

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/responses", post(create::create_response).get(ws::upgrade))
        .route("/responses/compact", post(compact::compact_response))
        .route(
            "/responses/{id}",
            get(resources::get_response).delete(resources::delete_response),
        )
        .route("/responses/{id}/input_items", get(resources::input_items))
        .route("/responses/{id}/trace", get(resources::get_trace))
        .route("/responses/{id}/cancel", post(resources::cancel_response))
        .route("/conversations", post(conversations::create))
        .route(
            "/conversations/{id}",
            get(conversations::get)
                .post(conversations::update)
                .delete(conversations::delete),
        )
        .route(
            "/conversations/{id}/items",
            get(conversations::list_items).post(conversations::add_items),
        )
        .route(
            "/conversations/{id}/items/{item_id}",
            get(conversations::get_item).delete(conversations::delete_item),
        )
        .route("/models", get(meta::list_models))
        .route("/mcp/servers", get(mcp::list_servers))
        .method_not_allowed_fallback(auth::method_not_allowed);
    let mut root = Router::new()
        .nest("/v1", api)
        .route("/health", get(meta::health))
        .route("/ready", get(meta::ready));
    if state.metrics.is_enabled() {
        root = root.route(metrics::route::PATH, get(metrics::route::scrape));
    }
    // Layers run bottom-up: the request id first, then the host check,
    // the body last.
    root.fallback(auth::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(from_fn_with_state(state.clone(), body::read_body))
        .layer(from_fn_with_state(state.clone(), admission::admit))
        .layer(from_fn_with_state(state.clone(), auth::require_key))
        .layer(from_fn_with_state(state.clone(), browser::cors))
        .layer(from_fn_with_state(state.clone(), browser::check_host))
        .layer(axum::middleware::from_fn(request_context::track))
        .with_state(state)
}

/// Serves until `shutdown` resolves, then drains (see `lifecycle.rs`):
/// `/ready` turns 503 and new requests are refused while running responses
/// get `shutdown_grace` to finish; those still running are then cancelled
/// (each ends `cancelled`, stored) and connections are closed.
pub async fn serve(
    listener: tokio::net::TcpListener,
    mut state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    state.loopback = listener.local_addr()?.ip().is_loopback();
    let keeper = CancellationToken::new();
    if let Some(store) = state.runs.clone() {
        tokio::spawn(runs::keep_leases(state.clone(), store, keeper.clone()));
    }
    let _stop_keeper = keeper.drop_guard();
    // Background runs are not cancelled by the drain: what is still running
    // after the grace period is left to the next process (lease recovery).
    let drained = lifecycle::drain(
        shutdown,
        state.lifecycle.clone(),
        state.inflight.clone(),
        state.config.shutdown_grace,
    );
    let limits = state.config.connections.clone();
    let upkeep = state.metrics.spawn_upkeep();
    let app = router(state);
    listen::accept_loop(listener, app, limits, drained).await;
    if let Some(task) = upkeep {
        task.abort();
    }
    Ok(())
}

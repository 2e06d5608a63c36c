//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.

mod admission;
mod auth;
mod body;
mod browser;
mod client_tools_status;
mod completion;
pub mod config;
mod consistency;
mod create;
pub mod error;
mod in_place;
pub mod inflight;
pub mod keys;
pub mod limits;
mod listen;
mod mcp;
mod meta;
pub mod metrics;
pub mod quota;
mod quota_gate;
pub mod request_context;
mod resources;
pub mod scopes;
pub mod sse;
pub mod tenant;

use std::future::Future;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use windlass_engine::{Engine, QuotaCounter};

pub use config::{ConnectionLimits, MetricsConfig, ServerConfig, ServerFile, SettingsError};
pub use error::ApiError;
pub use inflight::Inflight;
pub use keys::{ApiKey, AuthedKey, KeyConfig, KeyError, KeyRing};
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
    /// Served at `GET /metrics`; disabled by `[server.metrics] enabled = false`.
    pub metrics: Metrics,
    /// Request/token budgets per key and tenant (in process by default).
    pub quota: Arc<dyn QuotaCounter>,
}

impl AppState {
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        AppState {
            engine,
            inflight: Inflight::default(),
            keys: Arc::new(config.key_ring()),
            metrics: Metrics::from_config(&config.metrics),
            config: Arc::new(config),
            mcp: None,
            loopback: false,
            quota: Arc::new(InProcessQuota::new()),
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

    pub fn with_mcp(mut self, directory: Arc<dyn McpDirectory>) -> Self {
        self.mcp = Some(directory);
        self
    }
}

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/responses", post(create::create_response))
        .route(
            "/responses/{id}",
            get(resources::get_response).delete(resources::delete_response),
        )
        .route("/responses/{id}/input_items", get(resources::input_items))
        .route("/responses/{id}/trace", get(resources::get_trace))
        .route("/responses/{id}/cancel", post(resources::cancel_response))
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

/// Serves until `shutdown` resolves; then cancels every running response
/// (each ends `cancelled`, stored) and drains connections.
pub async fn serve(
    listener: tokio::net::TcpListener,
    mut state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    state.loopback = listener.local_addr()?.ip().is_loopback();
    let inflight = state.inflight.clone();
    let limits = state.config.connections.clone();
    let upkeep = state.metrics.spawn_upkeep();
    let app = router(state);
    listen::accept_loop(listener, app, limits, shutdown, move || {
        let n = inflight.cancel_all();
        tracing::info!(cancelled = n, "shutting down");
    })
    .await;
    if let Some(task) = upkeep {
        task.abort();
    }
    Ok(())
}

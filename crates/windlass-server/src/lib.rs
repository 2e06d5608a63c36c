//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.

mod admission;
mod auth;
mod body;
mod browser;
mod client_tools_status;
pub mod config;
mod consistency;
mod create;
pub mod error;
mod in_place;
pub mod inflight;
pub mod keys;
pub mod lifecycle;
pub mod limits;
mod listen;
mod mcp;
mod meta;
pub mod quota;
mod resources;
pub mod sse;
pub mod tenant;

use std::future::Future;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use windlass_engine::Engine;

pub use config::{ConnectionLimits, ServerConfig, ServerFile, SettingsError};
pub use error::ApiError;
pub use inflight::Inflight;
pub use keys::{ApiKey, AuthedKey, KeyConfig, KeyError, KeyRing};
pub use lifecycle::Lifecycle;
pub use limits::RequestLimits;
pub use mcp::McpDirectory;
pub use quota::InProcessQuota;
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
    /// Draining after a shutdown signal: not ready, new requests refused.
    pub lifecycle: Lifecycle,
}

impl AppState {
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        AppState {
            engine,
            inflight: Inflight::default(),
            keys: Arc::new(config.key_ring()),
            config: Arc::new(config),
            mcp: None,
            loopback: false,
            lifecycle: Lifecycle::default(),
        }
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
    // Layers run bottom-up: the host check first, the body last.
    Router::new()
        .nest("/v1", api)
        .route("/health", get(meta::health))
        .route("/ready", get(meta::ready))
        .fallback(auth::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(from_fn_with_state(state.clone(), body::read_body))
        .layer(from_fn_with_state(state.clone(), admission::admit))
        .layer(from_fn_with_state(state.clone(), auth::require_key))
        .layer(from_fn_with_state(state.clone(), browser::cors))
        .layer(from_fn_with_state(state.clone(), browser::check_host))
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
    let drained = lifecycle::drain(
        shutdown,
        state.lifecycle.clone(),
        state.inflight.clone(),
        state.config.shutdown_grace,
    );
    let limits = state.config.connections.clone();
    let app = router(state);
    listen::accept_loop(listener, app, limits, drained).await;
    Ok(())
}

//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.

mod auth;
mod client_tools_status;
mod create;
pub mod error;
mod in_place;
pub mod inflight;
mod mcp;
mod meta;
mod resources;
pub mod sse;

use std::future::Future;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use windlass_engine::Engine;

pub use error::ApiError;
pub use inflight::Inflight;
pub use mcp::McpDirectory;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest accepted request body (413 beyond).
    pub max_body_bytes: usize,
    /// Accepted bearer tokens; empty: no authentication.
    pub api_keys: Vec<String>,
    /// Bytes of framed events buffered per SSE stream before the engine
    /// waits for the client to read.
    pub sse_buffer_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: 32 * 1024 * 1024,
            api_keys: Vec::new(),
            sse_buffer_bytes: 64 * 1024,
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub engine: Engine,
    pub inflight: Inflight,
    pub config: Arc<ServerConfig>,
    /// Configured MCP servers, for `GET /v1/mcp/servers`.
    pub mcp: Option<Arc<dyn McpDirectory>>,
}

impl AppState {
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        AppState {
            engine,
            inflight: Inflight::default(),
            config: Arc::new(config),
            mcp: None,
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
        .route("/responses/{id}/cancel", post(resources::cancel_response))
        .route("/models", get(meta::list_models))
        .route("/mcp/servers", get(mcp::list_servers))
        .method_not_allowed_fallback(auth::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_key,
        ));
    Router::new()
        .nest("/v1", api)
        .route("/health", get(meta::health))
        .route("/ready", get(meta::ready))
        .fallback(auth::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .with_state(state)
}

/// Serves until `shutdown` resolves; then cancels every running response
/// (each ends `cancelled`, stored) and drains connections.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let inflight = state.inflight.clone();
    let app = router(state);
    // Small SSE frames must leave at once: without TCP_NODELAY, Nagle holds
    // the first event until the client's delayed ACK (~40 ms, BENCHMARKS.md).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            let n = inflight.cancel_all();
            tracing::info!(cancelled = n, "shutting down");
        })
        .await
}

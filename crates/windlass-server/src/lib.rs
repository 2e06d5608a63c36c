//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.

mod client_tools_status;
pub mod config;
pub mod error;
mod guard;
mod http;
mod intake;
mod item_list;
pub mod lifecycle;
mod listen;
pub mod logging;
pub mod metrics;
pub mod request_context;
pub mod run;
pub mod sse;
mod state;

use std::future::Future;

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;

pub use config::{ConnectionLimits, MetricsConfig, ServerConfig, ServerFile, SettingsError};
pub use error::ApiError;
pub use guard::keys::{ApiKey, AuthedKey, KeyConfig, KeyError, KeyRing};
pub use guard::limits::RequestLimits;
pub use guard::quota::InProcessQuota;
pub use guard::tenant::Tenant;
pub use guard::{keys, limits, quota, scopes, tenant};
pub use lifecycle::Lifecycle;
pub use metrics::store::TimedStore;
pub use metrics::Metrics;
pub use request_context::{RequestContext, REQUEST_ID};
pub use run::inflight::{self, Inflight};
pub use state::{AppState, McpDirectory};

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route(
            "/responses",
            post(http::create::create_response).get(http::ws::upgrade),
        )
        .route("/responses/compact", post(http::compact::compact_response))
        .route(
            "/responses/{id}",
            get(http::responses::get_response).delete(http::responses::delete_response),
        )
        .route(
            "/responses/{id}/input_items",
            get(http::responses::input_items),
        )
        .route("/responses/{id}/trace", get(http::responses::get_trace))
        .route(
            "/responses/{id}/cancel",
            post(http::responses::cancel_response),
        )
        .route("/conversations", post(http::conversations::create))
        .route(
            "/conversations/{id}",
            get(http::conversations::get)
                .post(http::conversations::update)
                .delete(http::conversations::delete),
        )
        .route(
            "/conversations/{id}/items",
            get(http::conversations::list_items).post(http::conversations::add_items),
        )
        .route(
            "/conversations/{id}/items/{item_id}",
            get(http::conversations::get_item).delete(http::conversations::delete_item),
        )
        .route("/models", get(http::meta::list_models))
        .route("/mcp/servers", get(http::mcp::list_servers))
        .method_not_allowed_fallback(http::fallback::method_not_allowed);
    let mut root = Router::new()
        .nest("/v1", api)
        .route("/health", get(http::meta::health))
        .route("/ready", get(http::meta::ready));
    if state.metrics.is_enabled() {
        root = root.route(metrics::PATH, get(http::metrics::scrape));
    }
    // Layers run bottom-up: the request id first, then the host check,
    // the body last.
    root.fallback(http::fallback::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(from_fn_with_state(state.clone(), guard::body::read_body))
        .layer(from_fn_with_state(state.clone(), guard::admission::admit))
        .layer(from_fn_with_state(state.clone(), guard::auth::require_key))
        .layer(from_fn_with_state(state.clone(), guard::browser::cors))
        .layer(from_fn_with_state(
            state.clone(),
            guard::browser::check_host,
        ))
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
        tokio::spawn(run::recover::keep_leases(
            state.clone(),
            store,
            keeper.clone(),
        ));
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

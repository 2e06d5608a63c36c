//! Windlass's HTTP surfaces: thin adapters that turn HTTP into engine calls.
//!
//! Layer: a surface over the engine; it never depends on the SDK (`windlass`) or
//! the binary (`windlass-cli`), and gets adapters as ports through `AppState`.
//!
//! # Routes
//!
//! | Method and path | Handler (`http/`) | Scope |
//! |---|---|---|
//! | `POST /v1/responses` (JSON, SSE, `background`) | `create.rs` | `responses:write` |
//! | `GET /v1/responses` (WebSocket upgrade) | `ws.rs` | `responses:write` |
//! | `POST /v1/responses/compact` | `compact.rs` | `responses:write` |
//! | `POST /v1/responses/input_tokens` | `input_tokens.rs` | `responses:write` |
//! | `POST`/`GET /v1/prompts`, `GET`/`DELETE /v1/prompts/{id}`, `POST`/`GET …/versions`, `GET …/versions/{version}` | `prompts.rs` | `responses:*` |
//! | `GET /v1/responses/{id}` (`?stream=true` resumes the stream) | `responses.rs` | `responses:read` |
//! | `DELETE /v1/responses/{id}` | `responses.rs` | `responses:write` |
//! | `GET /v1/responses/{id}/input_items` | `responses.rs` | `responses:read` |
//! | `GET /v1/responses/{id}/trace` | `responses.rs` | `traces:read` |
//! | `POST /v1/responses/{id}/cancel` | `responses.rs` | `responses:write` |
//! | `POST /v1/conversations`, `GET`/`POST`/`DELETE /v1/conversations/{id}` | `conversations.rs` | `responses:*` |
//! | `GET`/`POST /v1/conversations/{id}/items`, `GET`/`DELETE …/items/{item_id}` | `conversations.rs` | `responses:*` |
//! | `POST`/`GET /v1/files`, `GET`/`DELETE /v1/files/{id}`, `GET …/content` | `files.rs` | `files:*` |
//! | `/v1/vector_stores` (create, list, retrieve, modify, delete, `/search`) | `vector_stores.rs` | `files:*` |
//! | `/v1/vector_stores/{id}/files`, `/file_batches` | `vector_store_files.rs` | `files:*` |
//! | `/v1/containers`, `/v1/containers/{id}/files` | `containers.rs` | `files:*` |
//! | `POST /v1/embeddings` | `embeddings.rs` | `responses:write` |
//! | `GET /v1/models` | `meta.rs` | `models:read` |
//! | `GET /v1/mcp/servers` | `mcp.rs` | `models:read` |
//! | `POST`/`GET`/`DELETE /mcp` (when the binary mounts it) | the binary's MCP endpoint | `responses:write` (`GET`: `responses:read`) |
//! | `POST /v1/messages` (JSON, SSE), `POST /v1/messages/count_tokens` | `messages/` (Anthropic's Messages API) | `responses:write` |
//! | `GET /health`, `GET /ready` | `meta.rs` | none |
//! | `GET /metrics` (unless `[server.metrics] enabled = false`) | `metrics.rs` | none (`responses:read` with `require_key`) |
//! | anything else | `fallback.rs` (404, 405) | |
//!
//! Scopes are decided in `guard/scopes.rs` (`responses:*` and `files:*`:
//! read for `GET` and vector store search, write otherwise).
//!
//! # Where things are
//!
//! - `http/`: one file per route family; a route never uses another
//!   route's file (`scripts/import-graph.py` checks it).
//! - `guard/`: the layers every request passes, outermost first: request
//!   id (`request_context.rs`), `Host` check and CORS (`browser.rs`), key
//!   and scope (`auth.rs`, `keys.rs`, `scopes.rs`, `tenant.rs`), load
//!   shedding and draining (`admission.rs`), the body's type, size and
//!   deadline and the request limits (`body.rs`, `limits.rs`); then, per
//!   create, quotas (`quota.rs`, `quota_gate.rs`) and the running-previous
//!   check (`consistency.rs`).
//! - `intake.rs`: JSON bodies parsed into typed requests; a create admitted
//!   and prepared (the one caller of the engine's `prepare*`).
//! - `run/`: the launcher every surface starts a response through
//!   (`launch.rs`), the running responses (`inflight.rs`), a stream's event
//!   log (`log.rs`), background runs, their recovery and stream resume.
//! - `sse/`: the SSE body and its keep-alives; `metrics/`: Prometheus.
//! - `resources.rs`: [`Resources`] (files, vector stores, containers,
//!   embeddings) and what their routes share; `multipart.rs`: upload bodies
//!   and downloads; `ingest.rs`: the background ingestion worker `serve`
//!   runs when resources are wired.
//! - `state.rs`: [`AppState`]; `config.rs`: [`ServerConfig`]; `listen.rs`
//!   and `lifecycle.rs`: the accept loop and graceful shutdown.

mod client_tools_status;
pub mod config;
mod conn_threads;
pub mod error;
pub mod fd_caps;
mod guard;
mod http;
pub mod ingest;
mod intake;
mod item_list;
pub mod lifecycle;
mod listen;
pub mod logging;
pub mod messages;
pub mod metrics;
mod multipart;
mod prompting;
pub mod request_context;
pub mod resources;
pub mod run;
pub mod sse;
mod state;

use std::future::Future;

use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;

use http::{
    compact, containers, conversations, create, embeddings, fallback, files, input_tokens, mcp,
    meta, prompts, responses, vector_store_files, vector_stores, ws,
};

pub use config::{ConnectionLimits, MetricsConfig, ServerConfig, ServerFile, SettingsError};
pub use conn_threads::CONNECTION_THREAD_NAME;
pub use error::ApiError;
pub use guard::jwt::TokenExpiry;
pub use guard::keys::{ApiKey, AuthedKey, KeyConfig, KeyError, KeyRing};
pub use guard::limits::RequestLimits;
pub use guard::quota::InProcessQuota;
pub use guard::tenant::Tenant;
pub use guard::{jwt, keys, limits, quota, scopes, tenant};
pub use lifecycle::Lifecycle;
pub use metrics::store::TimedStore;
pub use metrics::Metrics;
pub use request_context::{RequestContext, REQUEST_ID};
pub use resources::{EmbeddingsUpstreams, IngestConfig, Resources};
pub use run::inflight::{self, Inflight};
pub use run::notify::ResponseNotifier;
pub use state::{AppState, McpDirectory};

/// The routes of the table above, behind the `guard/` layers.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/responses", post(create::create_response).get(ws::upgrade))
        .route("/responses/compact", post(compact::compact_response))
        .route("/responses/input_tokens", post(input_tokens::count))
        .route("/prompts", post(prompts::create).get(prompts::list))
        .route("/prompts/{id}", get(prompts::get).delete(prompts::delete))
        .route(
            "/prompts/{id}/versions",
            post(prompts::add_version).get(prompts::versions),
        )
        .route("/prompts/{id}/versions/{version}", get(prompts::version))
        .route(
            "/responses/{id}",
            get(responses::get_response).delete(responses::delete_response),
        )
        .route("/responses/{id}/input_items", get(responses::input_items))
        .route("/responses/{id}/trace", get(responses::get_trace))
        .route("/responses/{id}/cancel", post(responses::cancel_response))
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
        .route("/messages", post(messages::create_message))
        .route("/messages/count_tokens", post(messages::count_tokens))
        .merge(files::routes(&state))
        .merge(vector_stores::routes())
        .merge(vector_store_files::routes())
        .merge(containers::routes(&state))
        .merge(embeddings::routes())
        .method_not_allowed_fallback(fallback::method_not_allowed);
    let mut root = Router::new()
        .nest("/v1", api)
        .route("/health", get(meta::health))
        .route("/ready", get(meta::ready));
    if state.metrics.is_enabled() {
        root = root.route(metrics::PATH, get(http::metrics::scrape));
    }
    if let Some(endpoint) = state.mcp_endpoint.clone() {
        root = root.route_service("/mcp", endpoint);
    }
    // Layers run bottom-up: the request id first, then the host check,
    // the body last.
    root.fallback(fallback::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(from_fn_with_state(state.clone(), guard::body::read_body))
        .layer(from_fn_with_state(state.clone(), guard::admission::admit))
        .layer(from_fn_with_state(state.clone(), guard::auth::require_key))
        .layer(from_fn_with_state(state.clone(), guard::browser::cors))
        .layer(from_fn_with_state(
            state.clone(),
            guard::browser::check_host,
        ))
        .layer(axum::middleware::from_fn(messages::errors::anthropic_shape))
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
    state.shared_mut().loopback = listener.local_addr()?.ip().is_loopback();
    let keeper = CancellationToken::new();
    if let Some(store) = state.runs.clone() {
        tokio::spawn(run::recover::keep_leases(
            state.clone(),
            store,
            keeper.clone(),
        ));
    }
    // Ingestion stops claiming once the server stops accepting, then
    // drains (see `ingest.rs`) before `serve` returns.
    let ingestion = state.resources.clone().map(|resources| {
        let replica = state.background.replica.clone();
        tokio::spawn(ingest::run(resources, replica, keeper.clone()))
    });
    let _stop_keeper = keeper.clone().drop_guard();
    // Background runs are not cancelled by the drain: what is still running
    // after the grace period is left to the next process (lease recovery).
    let drained = lifecycle::drain(
        shutdown,
        state.lifecycle.clone(),
        state.inflight.clone(),
        state.config.shutdown_grace,
    );
    let limits = state.config.connections.clone();
    let threads = match state.config.connection_threads {
        0 => None,
        n => Some(conn_threads::ConnectionThreads::start(n)?),
    };
    let upkeep = state.metrics.spawn_upkeep();
    let app = router(state);
    listen::accept_loop(listener, app, limits, threads, drained).await;
    keeper.cancel();
    if let Some(task) = ingestion {
        let _ = task.await;
    }
    if let Some(task) = upkeep {
        task.abort();
    }
    Ok(())
}

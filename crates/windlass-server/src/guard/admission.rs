//! Load shedding: a connection accepted past `max_connections` is served the
//! probes only, and a create past `max_inflight_responses` running ones is
//! answered 503 with `Retry-After`, before any work. While draining for
//! shutdown every request but the probes is refused with 503 and
//! `Connection: close`, so clients and balancers move to another replica.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::guard::auth::is_probe;
use crate::listen::Overloaded;
use crate::state::AppState;

/// Seconds a shed client is told to wait.
const RETRY_AFTER_SECS: &str = "1";

pub(crate) async fn admit(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    // Scrapes matter most when the server is busy.
    if is_probe(path) || path == crate::metrics::PATH {
        return next.run(req).await;
    }
    if app.lifecycle.is_draining() {
        let mut resp = busy(
            "The server is shutting down; retry on another instance.",
            "server_shutting_down",
        );
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return resp;
    }
    if req.extensions().get::<Overloaded>().is_some() {
        return busy("Too many open connections; retry shortly.", OVERLOADED);
    }
    let limit = app.config.connections.max_inflight_responses;
    // Counts runs registered so far: a burst can pass it by the few
    // requests still being prepared, which is what a soft cap allows.
    if req.method() == Method::POST && path == "/v1/responses" && app.inflight.len() >= limit {
        return busy(
            "Too many responses are being generated; retry shortly.",
            OVERLOADED,
        );
    }
    next.run(req).await
}

const OVERLOADED: &str = "server_overloaded";

fn busy(message: &str, code: &'static str) -> Response {
    let mut resp = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message)
        .code(code)
        .into_response();
    resp.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECS),
    );
    resp
}

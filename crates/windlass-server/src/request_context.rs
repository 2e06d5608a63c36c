//! Every request's identity in the logs: an `x-request-id` (the client's,
//! when it is a safe token, or a new one), echoed on the response and set
//! as a field of the request's span, so every log line of the request
//! carries it. The span continues the client's W3C trace when trace
//! propagation is installed. One access line per request, unless the
//! handler logged its own completion line (responses do).

use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;
use windlass_protocol::ids::new_id;

pub const REQUEST_ID: &str = "x-request-id";
/// Longest client request id kept; a longer one is replaced.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// The request's id and arrival time, for handlers.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub id: String,
    pub started: Instant,
}

/// Set on a response whose handler already logged its completion line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompletionLogged;

/// A client id is kept when it is 1..=128 characters of `A-Z a-z 0-9 - _
/// . : + / = @`: nothing that could forge a log field or a header.
pub fn valid_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_REQUEST_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:+/=@".contains(&b))
}

fn request_id(headers: &HeaderMap) -> String {
    match headers.get(REQUEST_ID).and_then(|v| v.to_str().ok()) {
        Some(id) if valid_request_id(id) => id.to_owned(),
        _ => new_id("req"),
    }
}

pub async fn track(mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id(req.headers());
    let span = tracing::info_span!("request", request_id = %id);
    {
        let headers = req.headers();
        windlass_engine::adopt_trace_parent(&span, &|name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        });
    }
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    req.extensions_mut().insert(RequestContext {
        id: id.clone(),
        started,
    });
    let mut response = next.run(req).instrument(span.clone()).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    if response.extensions().get::<CompletionLogged>().is_none() {
        let status = response.status().as_u16();
        let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        span.in_scope(|| {
            tracing::info!(target: "windlass::access", %method, %path, status, duration_ms, "request")
        });
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_bounded_ids_are_kept() {
        assert!(valid_request_id("abc-123_X.y:z"));
        assert!(valid_request_id("3f2a/b+c=@d"));
        assert!(valid_request_id(&"a".repeat(MAX_REQUEST_ID_LEN)));
        assert!(!valid_request_id(&"a".repeat(MAX_REQUEST_ID_LEN + 1)));
        assert!(!valid_request_id(""));
        assert!(!valid_request_id("has space"));
        assert!(!valid_request_id("quote\"d"));
        assert!(!valid_request_id("new\nline"));
        assert!(!valid_request_id("ünïcode"));
    }

    #[test]
    fn a_bad_or_missing_id_is_replaced_by_a_new_one() {
        let mut h = HeaderMap::new();
        assert!(request_id(&h).starts_with("req_"));
        h.insert(REQUEST_ID, HeaderValue::from_static("bad id"));
        assert!(request_id(&h).starts_with("req_"));
        h.insert(REQUEST_ID, HeaderValue::from_static("client-7"));
        assert_eq!(request_id(&h), "client-7");
    }
}

//! Every error under `/v1/messages` in Anthropic's shape: `{"type":
//! "error", "error": {"type", "message"}, "request_id"}`, the type chosen
//! by status as Anthropic does (400 `invalid_request_error`, 401
//! `authentication_error`, 403 `permission_error`, 404 `not_found_error`,
//! 413 `request_too_large`, 429 `rate_limit_error`, 500 `api_error`,
//! 503/529 `overloaded_error`, 504 `timeout_error`).
//!
//! The guards and handlers answer in the OpenAI shape as on every route;
//! this layer, outside all of them, rewrites those answers for the Messages
//! routes, so a key, scope, size, quota or load refusal reads the same as
//! a bad field. Streams are never touched (a stream's errors are `error`
//! events, written by the stream itself).

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use windlass_protocol::anthropic::{error_type_for_status, ErrorDetail, ErrorResponse, ErrorType};
use windlass_protocol::ErrorBody;

use crate::request_context::RequestContext;

/// Error bodies are small; anything larger is not one of ours.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Anthropic's request id header (its SDKs read it into `_request_id`).
const ANTHROPIC_REQUEST_ID: &str = "request-id";

pub(crate) fn is_messages_path(path: &str) -> bool {
    path == "/v1/messages" || path.starts_with("/v1/messages/")
}

pub(crate) async fn anthropic_shape(req: Request, next: Next) -> Response {
    if !is_messages_path(req.uri().path()) {
        return next.run(req).await;
    }
    let request_id = req
        .extensions()
        .get::<RequestContext>()
        .map(|c| c.id.clone());
    let mut response = next.run(req).await;
    if let Some(id) = request_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok())
    {
        response.headers_mut().insert(ANTHROPIC_REQUEST_ID, id);
    }
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ERROR_BODY).await else {
        return (parts.status, "error body too large").into_response();
    };
    let Ok(openai) = serde_json::from_slice::<ErrorBody>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let anthropic = ErrorResponse {
        kind: ErrorType::Error,
        error: ErrorDetail {
            kind: error_type_for_status(status.as_u16()).to_owned(),
            message: openai.error.message,
        },
        request_id,
    };
    let body = serde_json::to_vec(&anthropic).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

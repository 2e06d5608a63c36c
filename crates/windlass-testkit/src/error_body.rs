//! The OpenAI-shaped error body the fake upstream answers with, in a leaf
//! module: replies build it when scripted, the JSON and SSE writers send it.

use serde_json::{json, Value};

/// OpenAI error `type` for an HTTP status.
pub(crate) fn error_type(status: u16) -> &'static str {
    match status {
        400 | 404 | 409 | 413 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "error",
    }
}

/// `{"error":{"message","type","code"}}`.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    json!({
        "error": {
            "message": message,
            "type": error_type(status),
            "code": status,
        }
    })
}

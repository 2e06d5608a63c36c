//! Anthropic's error shape: `{"type": "error", "error": {"type", "message"},
//! "request_id"}`, and the error types by HTTP status.

use serde::{Deserialize, Serialize};

/// Anthropic's error body: `{"type": "error", "error": {...}, "request_id"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct ErrorResponse {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    pub error: ErrorDetail,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The body's `type`, always `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum ErrorType {
    #[default]
    Error,
}

/// The inner `error`: its `type` (e.g. `invalid_request_error`) and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

/// Anthropic's error `type` for an HTTP status.
pub fn error_type_for_status(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        503 | 529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

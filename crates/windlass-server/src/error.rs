//! Every error answer in the OpenAI shape, with the right status code.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use windlass_engine::{EngineError, FailureKind, RunFailure, StoreError};
use windlass_protocol::{ErrorBody, ErrorObject};

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
    /// Seconds sent in `Retry-After` (rate limits).
    retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                error: ErrorObject {
                    message: message.into(),
                    kind: kind.to_owned(),
                    param: None,
                    code: None,
                },
            },
            retry_after: None,
        }
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.body.error.param = Some(param.into());
        self
    }

    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.body.error.code = Some(code.into());
        self
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    pub fn not_found(what: &str, id: &str) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            format!("{what} with id '{id}' not found."),
        )
        .code("not_found")
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut resp = (self.status, Json(self.body)).into_response();
        if let Some(secs) = self.retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        resp
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::InvalidRequest {
                message,
                param,
                code,
            } => with(ApiError::invalid(message), param, code),
            EngineError::NotFound {
                message,
                param,
                code,
            } => with(
                ApiError::new(StatusCode::NOT_FOUND, "invalid_request_error", message),
                param,
                code,
            ),
            EngineError::Store(s) => s.into(),
            // A refusal this server does not know yet is still a refusal
            // made before anything ran: an internal error, nothing written.
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::UnknownCursor(id) => {
                ApiError::invalid(format!("No item with id '{id}' in this response's input."))
                    .param("after")
            }
            other => ApiError::internal(other.to_string()).code("storage_error"),
        }
    }
}

impl From<&RunFailure> for ApiError {
    fn from(f: &RunFailure) -> Self {
        with(
            ApiError::new(
                failure_status(f.kind),
                f.kind.error_type(),
                f.message.clone(),
            ),
            f.param.clone(),
            Some(f.code().to_owned()),
        )
    }
}

/// The status a non-streaming request gets for a failed run.
fn failure_status(kind: FailureKind) -> StatusCode {
    match kind {
        FailureKind::UpstreamTimeout => StatusCode::GATEWAY_TIMEOUT,
        FailureKind::UpstreamRateLimited => StatusCode::TOO_MANY_REQUESTS,
        FailureKind::UpstreamRejected
        | FailureKind::UnsupportedForUpstream
        | FailureKind::ContextLengthExceeded => StatusCode::BAD_REQUEST,
        // Like OpenAI: an MCP server that cannot list its tools.
        FailureKind::McpListToolsFailed => StatusCode::FAILED_DEPENDENCY,
        FailureKind::Storage | FailureKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_GATEWAY,
    }
}

fn with(mut e: ApiError, param: Option<String>, code: Option<String>) -> ApiError {
    e.body.error.param = param;
    e.body.error.code = code;
    e
}

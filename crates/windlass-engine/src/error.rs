//! Errors the engine reports before a response starts, and how a run failed.

use crate::ports::provider::{ProviderError, TimeoutPhase};
use crate::ports::store::StoreError;

/// A request the engine refuses before running it. Nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// HTTP 400, `invalid_request_error`.
    #[error("{message}")]
    InvalidRequest {
        message: String,
        param: Option<String>,
        code: Option<String>,
    },
    /// HTTP 404, `invalid_request_error`.
    #[error("{message}")]
    NotFound {
        message: String,
        param: Option<String>,
        code: Option<String>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EngineError {
    pub fn invalid(message: impl Into<String>, param: impl Into<Option<String>>) -> Self {
        EngineError::InvalidRequest {
            message: message.into(),
            param: param.into(),
            code: None,
        }
    }

    pub fn invalid_code(message: impl Into<String>, param: Option<&str>, code: &str) -> Self {
        EngineError::InvalidRequest {
            message: message.into(),
            param: param.map(str::to_owned),
            code: Some(code.to_owned()),
        }
    }
}

/// Why a run ended `failed`, with what a JSON surface needs to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    /// The HTTP status a non-streaming surface should answer with.
    pub http_status: u16,
    /// OpenAI error `type`.
    pub kind: &'static str,
    /// The response `error.code`.
    pub code: String,
    pub message: String,
    pub param: Option<String>,
}

impl RunFailure {
    pub fn from_provider(err: &ProviderError) -> RunFailure {
        let (http_status, kind, code, param) = match err {
            ProviderError::Connect(_) => (502, "server_error", "upstream_unreachable", None),
            ProviderError::Timeout(TimeoutPhase::Connect) => {
                (504, "server_error", "upstream_timeout", None)
            }
            ProviderError::Timeout(_) => (504, "server_error", "upstream_timeout", None),
            ProviderError::Status { status: 429, .. } => {
                (429, "rate_limit_error", "rate_limit_exceeded", None)
            }
            // The operator's upstream key, not the client, is at fault.
            ProviderError::Status {
                status: 401 | 403, ..
            } => (502, "server_error", "upstream_auth_failed", None),
            ProviderError::Status { status, .. } if (400..500).contains(status) => {
                (400, "invalid_request_error", "upstream_rejected", None)
            }
            ProviderError::Status { .. } => (502, "server_error", "upstream_error", None),
            ProviderError::Interrupted(_) => (502, "server_error", "upstream_interrupted", None),
            ProviderError::Protocol(_) => (502, "server_error", "upstream_protocol_error", None),
            ProviderError::Unsupported { param, .. } => (
                400,
                "invalid_request_error",
                "unsupported_for_upstream",
                param.clone(),
            ),
        };
        RunFailure {
            http_status,
            kind,
            code: code.to_owned(),
            message: err.to_string(),
            param,
        }
    }

    pub fn internal(code: &str, message: impl Into<String>) -> RunFailure {
        RunFailure {
            http_status: 500,
            kind: "server_error",
            code: code.to_owned(),
            message: message.into(),
            param: None,
        }
    }
}

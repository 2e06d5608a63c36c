//! Errors the engine reports before a response starts, and how a run failed.

use crate::ports::agent::provider::ProviderError;
use crate::ports::agent::store::StoreError;

/// A request the engine refuses before running it. Nothing is written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// HTTP 400, `invalid_request_error`.
    #[error("{message}")]
    InvalidRequest {
        /// What was wrong, for the client.
        message: String,
        /// The request field at fault, when there is one.
        param: Option<String>,
        /// A machine-readable code, when there is one.
        code: Option<String>,
    },
    /// HTTP 404, `invalid_request_error`.
    #[error("{message}")]
    NotFound {
        /// What was not found, for the client.
        message: String,
        /// The request field naming it, when there is one.
        param: Option<String>,
        /// A machine-readable code, when there is one.
        code: Option<String>,
    },
    /// The store failed while preparing or reading.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EngineError {
    /// An `invalid_request_error` about `param`.
    pub fn invalid(message: impl Into<String>, param: impl Into<Option<String>>) -> Self {
        EngineError::InvalidRequest {
            message: message.into(),
            param: param.into(),
            code: None,
        }
    }

    /// An `invalid_request_error` about `param` with a machine-readable `code`.
    pub fn invalid_code(message: impl Into<String>, param: Option<&str>, code: &str) -> Self {
        EngineError::InvalidRequest {
            message: message.into(),
            param: param.map(str::to_owned),
            code: Some(code.to_owned()),
        }
    }
}

/// Why a run failed, as a type: each surface chooses its own answer (the
/// HTTP server maps it to a status code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// The upstream could not be reached (connection refused, DNS, TLS).
    UpstreamUnreachable,
    /// The upstream did not answer in time.
    UpstreamTimeout,
    /// The upstream answered 429.
    UpstreamRateLimited,
    /// The upstream refused the operator's credentials (401/403): the
    /// client is not at fault and never sees the upstream's text.
    UpstreamAuth,
    /// The upstream refused the request (another 4xx).
    UpstreamRejected,
    /// The upstream answered 5xx.
    UpstreamError,
    /// The upstream's stream ended before the turn did.
    UpstreamInterrupted,
    /// The upstream answered something that is not its wire format.
    UpstreamProtocol,
    /// The request uses something this upstream cannot carry.
    UnsupportedForUpstream,
    /// A declared MCP server could not list its tools.
    McpListToolsFailed,
    /// The transcript does not fit the model's context, even after what
    /// `truncation: "auto"` / `context_management` may drop.
    ContextLengthExceeded,
    /// The finished response could not be stored.
    Storage,
    /// A bug or an unexpected state inside the gateway.
    Internal,
}

impl FailureKind {
    /// The response's `error.code`.
    pub fn code(self) -> &'static str {
        match self {
            FailureKind::UpstreamUnreachable => "upstream_unreachable",
            FailureKind::UpstreamTimeout => "upstream_timeout",
            FailureKind::UpstreamRateLimited => "rate_limit_exceeded",
            FailureKind::UpstreamAuth => "upstream_auth_failed",
            FailureKind::UpstreamRejected => "upstream_rejected",
            FailureKind::UpstreamError => "upstream_error",
            FailureKind::UpstreamInterrupted => "upstream_interrupted",
            FailureKind::UpstreamProtocol => "upstream_protocol_error",
            FailureKind::UnsupportedForUpstream => "unsupported_for_upstream",
            FailureKind::McpListToolsFailed => "mcp_list_tools_failed",
            FailureKind::ContextLengthExceeded => "context_length_exceeded",
            FailureKind::Storage => "storage_error",
            FailureKind::Internal => "internal_error",
        }
    }

    /// The OpenAI error `type`.
    pub fn error_type(self) -> &'static str {
        match self {
            FailureKind::UpstreamRateLimited => "rate_limit_error",
            FailureKind::UpstreamRejected
            | FailureKind::UnsupportedForUpstream
            | FailureKind::ContextLengthExceeded => "invalid_request_error",
            _ => "server_error",
        }
    }
}

/// Why a run ended `failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    /// Which kind of failure, which decides the error code.
    pub kind: FailureKind,
    /// What went wrong, for the client.
    pub message: String,
    /// The request field at fault, when there is one.
    pub param: Option<String>,
}

impl RunFailure {
    /// A failure of `kind` with this message.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> RunFailure {
        RunFailure {
            kind,
            message: message.into(),
            param: None,
        }
    }

    /// The response's `error.code`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The failure a provider error ends a run with.
    pub fn from_provider(err: &ProviderError) -> RunFailure {
        let (kind, param) = match err {
            ProviderError::Connect(_) => (FailureKind::UpstreamUnreachable, None),
            ProviderError::Timeout(_) => (FailureKind::UpstreamTimeout, None),
            ProviderError::Status { status: 429, .. } => (FailureKind::UpstreamRateLimited, None),
            ProviderError::Status {
                status: 401 | 403, ..
            } => (FailureKind::UpstreamAuth, None),
            ProviderError::Status { status, .. } if (400..500).contains(status) => {
                (FailureKind::UpstreamRejected, None)
            }
            ProviderError::Status { .. } => (FailureKind::UpstreamError, None),
            ProviderError::Interrupted(_) => (FailureKind::UpstreamInterrupted, None),
            ProviderError::Protocol(_) => (FailureKind::UpstreamProtocol, None),
            ProviderError::Unsupported { param, .. } => {
                (FailureKind::UnsupportedForUpstream, param.clone())
            }
        };
        RunFailure {
            kind,
            message: err.to_string(),
            param,
        }
    }
}

//! Called by the loop to list and call MCP tools; a port so the protocol stays in windlass-tools.
//!
//! The MCP port: listing and calling tools of MCP servers, whether the
//! operator configured them or a request declared them. The engine owns the
//! items, events, approvals and dedupe; the adapter owns the protocol,
//! sessions and the outbound-URL guard.

use std::fmt;

use tokio_util::sync::CancellationToken;
use windlass_protocol::{McpRequireApproval, McpToolInfo};

use crate::ports::agent::tools::ToolResult;

/// The server a request refers to.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct McpServerRef {
    /// The server's label, as requests name it.
    pub label: String,
    /// The request's `server_url`; `None` means the operator-configured
    /// server with this label.
    pub url: Option<String>,
    /// Request headers for the server (including `Authorization` built from
    /// the tool's `authorization`). Secret: never stored, logged or echoed.
    pub headers: Vec<(String, String)>,
}

// Headers carry secrets, so Debug never prints them.
impl fmt::Debug for McpServerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerRef")
            .field("label", &self.label)
            .field("url", &self.url)
            .field(
                "headers",
                &format_args!("[{} redacted]", self.headers.len()),
            )
            .finish()
    }
}

/// Why an MCP call or listing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The request may not use this server (unknown label, URL refused by
    /// the outbound guard, bad URL). Reported as a 400 before anything runs.
    #[error("{0}")]
    Refused(String),
    /// The server could not be reached or did not answer the protocol.
    #[error("MCP server unavailable: {0}")]
    Unavailable(String),
    /// The server answered with an error (JSON-RPC error, unknown tool).
    #[error("{0}")]
    Failed(String),
    /// No answer within this many milliseconds.
    #[error("MCP call timed out after {0} ms")]
    Timeout(u64),
    /// The response was cancelled while the call ran.
    #[error("cancelled")]
    Cancelled,
}

/// MCP servers as the engine sees them.
#[async_trait::async_trait]
pub trait McpHub: Send + Sync {
    /// Checks, before the response starts, that the request may use
    /// `server`: a configured label exists, or the URL passes the outbound
    /// guard (scheme, DNS resolution, address ranges).
    async fn check(&self, server: &McpServerRef) -> Result<(), McpError>;

    /// All tools of the server (every page).
    async fn list_tools(
        &self,
        server: &McpServerRef,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpToolInfo>, McpError>;

    /// Calls `tool` with `arguments` (a JSON object, as text). A result the
    /// server flags `isError` comes back as `Ok` with `is_error` set; its
    /// content is turned into text without loss.
    async fn call_tool(
        &self,
        server: &McpServerRef,
        tool: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError>;

    /// The approval rule the operator set for a configured server, used when
    /// a request does not give `require_approval`.
    fn default_approval(&self, _label: &str) -> Option<McpRequireApproval> {
        None
    }
}

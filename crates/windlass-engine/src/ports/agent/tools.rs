//! Called by the loop for each call the server runs; a port so built-ins and local tools plug in.
//!
//! The tool port: executors the engine hands server-owned calls to.

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use windlass_protocol::ToolOutput;

/// How a tool is hosted .
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolKind {
    /// Executed by the client: the response ends with `requires_action`.
    Function,
    Mcp,
    Sandbox,
    Builtin,
    /// Tools of the embedding program (the SDK's local tools).
    Local,
}

/// Where a model-visible tool came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOrigin {
    /// A `{"type": "function"}` tool of the request (or an SDK-registered tool).
    Function,
    /// A tool of an MCP server; `name` is the server's own tool name.
    Mcp { server_label: String, name: String },
    /// A tool the operator configured on the gateway.
    Builtin,
}

/// Who handles calls to a tool, decided once when the request is prepared.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolOwner {
    /// The client runs it: the response pauses at its calls.
    Client,
    /// A tool of the request's MCP server with this label, run through the hub.
    Mcp { label: String },
    /// A gateway executor (by index in the engine's list).
    Builtin { executor: usize },
    /// An executor of the embedding program (the SDK's local tools).
    Local { executor: usize },
}

impl ToolOwner {
    /// The owner of a tool given the executor (if any) that accepts it.
    pub(crate) fn of(executor: Option<(usize, ToolKind)>) -> ToolOwner {
        match executor {
            None | Some((_, ToolKind::Function)) => ToolOwner::Client,
            Some((i, ToolKind::Local)) => ToolOwner::Local { executor: i },
            Some((i, _)) => ToolOwner::Builtin { executor: i },
        }
    }

    /// Whether the server runs its calls.
    pub fn runs_on_server(&self) -> bool {
        !matches!(self, ToolOwner::Client)
    }
}

/// A tool as the model sees it, plus where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The model-visible name (unique within a request).
    pub name: String,
    pub description: Option<String>,
    pub parameters: Value,
    pub strict: Option<bool>,
    pub origin: ToolOrigin,
}

/// One call the model made .
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    /// JSON-encoded arguments, as the model produced them.
    pub arguments: String,
}

/// The outcome of a call .
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub output: ToolOutput,
    pub is_error: bool,
}

impl ToolResult {
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            output: ToolOutput::Text(text.into()),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            output: ToolOutput::Text(text.into()),
            is_error: true,
        }
    }
}

/// What an executor gets besides the call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub response_id: String,
    /// Fired when the response is cancelled; executors should stop promptly.
    pub cancel: CancellationToken,
    pub turn: u32,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    #[error("{0}")]
    Failed(String),
    #[error("tool timed out after {0} ms")]
    Timeout(u64),
    #[error("tool server unavailable: {0}")]
    Unavailable(String),
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
}

/// A pluggable tool backend .
#[async_trait::async_trait]
pub trait ToolExecutor: Send + Sync {
    fn kind(&self) -> ToolKind;

    /// Tools this executor offers the model on every request, besides the
    /// request's own (e.g. built-ins). Their calls come to this executor.
    fn definitions(&self) -> Vec<ToolDefinition> {
        Vec::new()
    }

    /// Whether this executor runs calls of `tool`.
    fn can_execute(&self, tool: &ToolDefinition) -> bool;

    /// Runs one call. An `Err` becomes an error output fed to the model; the
    /// loop goes on.
    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError>;
}

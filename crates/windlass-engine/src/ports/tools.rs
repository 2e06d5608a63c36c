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

//! Called by the loop for each call the server runs; a port so built-ins and local tools plug in.
//!
//! The tool port: executors the engine hands server-owned calls to.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::{Item, Tool, ToolOutput};

/// How a tool is hosted .
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolKind {
    /// Executed by the client: the response ends with `requires_action`.
    Function,
    /// Run through an MCP server.
    Mcp,
    /// Run in the sandbox (commands, file edits).
    Sandbox,
    /// One of the gateway's built-in tools.
    Builtin,
    /// Tools of the embedding program (the SDK's local tools).
    Local,
    /// OpenAI's hosted tool types the gateway runs itself (`file_search`,
    /// `web_search`, `code_interpreter`): calls become their own items.
    Hosted,
}

/// Where a model-visible tool came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// One per tool definition of a request; boxing the hosted tool would
// only move the allocation.
#[allow(clippy::large_enum_variant)]
pub enum ToolOrigin {
    /// A `{"type": "function"}` tool of the request (or an SDK-registered tool).
    Function,
    /// A tool of an MCP server; `name` is the server's own tool name.
    Mcp {
        /// The label of the request's MCP server.
        server_label: String,
        /// The server's own name for the tool.
        name: String,
    },
    /// A tool the operator configured on the gateway.
    Builtin,
    /// A hosted tool type of the request (`file_search`, `web_search`,
    /// `code_interpreter`), offered to the model as a function.
    Hosted(Box<HostedTool>),
    /// One of OpenAI's client-executed types that the operator has the
    /// gateway run instead (`shell`, `apply_patch`): offered to the model
    /// as for a client, its calls and outputs are OpenAI's items.
    ServerRun(ServerRunType),
}

/// The client-executed types a gateway may run itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerRunType {
    /// `shell`: commands run in the sandbox.
    Shell,
    /// `apply_patch`: file edits applied in the sandbox's work directory.
    ApplyPatch,
}

impl ServerRunType {
    /// The tool type, which is also the model-visible function name.
    pub fn type_name(self) -> &'static str {
        match self {
            ServerRunType::Shell => "shell",
            ServerRunType::ApplyPatch => "apply_patch",
        }
    }
}

/// A hosted tool of the request: its settings as the client sent them,
/// where it sits in `tools`, and its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct HostedTool {
    /// Which hosted tool type it is.
    pub kind: HostedKind,
    /// Its index in the request's `tools`.
    pub index: usize,
    /// The request's typed tool (`vector_store_ids`, `filters`,
    /// `search_context_size`, `container`, ...).
    pub tool: Tool,
}

/// Who handles calls to a tool, decided once when the request is prepared.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolOwner {
    /// The client runs it: the response pauses at its calls.
    Client,
    /// A tool of the request's MCP server with this label, run through the hub.
    Mcp {
        /// The server's label.
        label: String,
    },
    /// A gateway executor (by index in the engine's list).
    Builtin {
        /// Its index in the engine's executor list.
        executor: usize,
    },
    /// An executor of the embedding program (the SDK's local tools).
    Local {
        /// Its index in the engine's executor list.
        executor: usize,
    },
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
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// The JSON schema of its arguments.
    pub parameters: Value,
    /// Whether the upstream must follow the schema exactly.
    pub strict: Option<bool>,
    /// Where it came from, which decides who runs it.
    pub origin: ToolOrigin,
}

/// One call the model made .
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, which its output names.
    pub call_id: String,
    /// The model-visible name of the tool called.
    pub name: String,
    /// JSON-encoded arguments, as the model produced them.
    pub arguments: String,
}

/// The outcome of a call .
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the model gets back.
    pub output: ToolOutput,
    /// Whether the output reports a failure.
    pub is_error: bool,
    /// A hosted call's complete item (status `completed` or `failed`): it
    /// becomes the call's output item, and the model reads the text
    /// rendered from it (`windlass_protocol::hosted_replay::model_text`).
    pub item: Option<Box<Item>>,
}

impl ToolResult {
    /// A successful text result.
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            output: ToolOutput::Text(text.into()),
            is_error: false,
            item: None,
        }
    }

    /// A hosted call's result: its complete item, the model's text rendered
    /// from it.
    pub fn hosted(item: Item) -> Self {
        let text = windlass_protocol::hosted_replay::model_text(&item).unwrap_or_default();
        ToolResult {
            is_error: !windlass_protocol::hosted_replay::succeeded(&item),
            output: ToolOutput::Text(text),
            item: Some(Box::new(item)),
        }
    }

    /// A failure the model reads as the call's output.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            output: ToolOutput::Text(text.into()),
            is_error: true,
            item: None,
        }
    }
}

/// What an executor gets besides the call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The response the call belongs to.
    pub response_id: String,
    /// Fired when the response is cancelled; executors should stop promptly.
    pub cancel: CancellationToken,
    /// The turn that made the call (from 0).
    pub turn: u32,
    /// The tenant the response runs for: an executor reads only its rows.
    pub tenant: String,
    /// A hosted call: its tool, item id and progress channel.
    pub hosted: Option<HostedCall>,
}

/// What a hosted call's executor gets: the request's tool, the id its item
/// must carry (already announced to the client), and a way to report
/// progress while it runs.
#[derive(Debug, Clone)]
pub struct HostedCall {
    /// The request's tool the call is for.
    pub tool: HostedTool,
    /// The id the call's item carries.
    pub item_id: String,
    /// Where the executor reports progress.
    pub progress: Progress,
}

/// Progress of a running hosted call; the loop turns it into stream events
/// on the call's item.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HostedProgress {
    /// More code (`response.code_interpreter_call_code.delta`).
    CodeDelta(String),
    /// The code is complete (`response.code_interpreter_call_code.done`).
    CodeDone(String),
}

/// Sends a hosted call's progress to the loop (never blocks; progress sent
/// after the call ended is dropped).
#[derive(Debug, Clone)]
pub struct Progress {
    item_id: String,
    tx: Option<mpsc::UnboundedSender<(String, HostedProgress)>>,
}

impl Progress {
    pub(crate) fn new(
        item_id: String,
        tx: mpsc::UnboundedSender<(String, HostedProgress)>,
    ) -> Progress {
        Progress {
            item_id,
            tx: Some(tx),
        }
    }

    /// A channel to nowhere (tests, callers outside the loop).
    pub fn none() -> Progress {
        Progress {
            item_id: String::new(),
            tx: None,
        }
    }

    /// Sends progress to the loop (dropped once the call ended).
    pub fn report(&self, p: HostedProgress) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((self.item_id.clone(), p));
        }
    }
}

/// Why a tool call failed; the model reads it as an error output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool ran and failed, with its message.
    #[error("{0}")]
    Failed(String),
    /// No result within this many milliseconds.
    #[error("tool timed out after {0} ms")]
    Timeout(u64),
    /// The tool's server could not be reached.
    #[error("tool server unavailable: {0}")]
    Unavailable(String),
    /// The arguments do not fit the tool.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
}

/// A pluggable tool backend .
#[async_trait::async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Which kind of tool this executor runs.
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

//! Errors of the SDK: building an agent, and calls the client refuses.

use windlass_engine::{EngineError, ProviderError};

/// Why [`AgentBuilder::build`](super::AgentBuilder::build) refused the configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name (the registry is checked once, at build).
    #[error("Duplicate tool name: {0}")]
    DuplicateTool(String),
    /// A tool name the upstream APIs would refuse.
    #[error("Invalid tool name '{0}': use letters, digits, '_' or '-', at most 64 characters")]
    InvalidToolName(String),
    /// No model was set.
    #[error("no model: call .model(\"...\")")]
    MissingModel,
    /// Neither a base URL nor a provider was set.
    #[error("no upstream: call .base_url(\"http://host:port/v1\") or .provider(..)")]
    MissingUpstream,
    /// `max_tool_iterations(0)`: a run needs at least one model turn.
    #[error("max_tool_iterations must be at least 1")]
    ZeroIterations,
    /// The upstream client could not be built from the settings.
    #[error("upstream: {0}")]
    Provider(#[from] ProviderError),
    /// An MCP server's configuration was refused.
    #[cfg(feature = "mcp")]
    #[error("MCP server: {0}")]
    Mcp(#[from] windlass_tools::ConfigError),
    /// The SDK cannot answer approval requests; gate calls with hooks instead.
    #[cfg(feature = "mcp")]
    #[error("MCP server '{0}': require_approval must be \"never\" in the SDK (gate calls with a PreToolUse hook)")]
    McpApproval(String),
}

/// Why a [`Client`](super::Client) call was refused. Nothing was sent to the
/// model and the conversation is unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SdkError {
    /// A `UserPromptSubmit` hook blocked the prompt.
    #[error("prompt blocked: {reason}")]
    PromptBlocked {
        /// What the hook said, for the caller's message.
        reason: String,
    },
    /// The engine refused the request (bad parameters, unknown call id, ...).
    #[error("request refused: {0}")]
    Request(#[from] EngineError),
    /// `add_tool_result` for a call that is not waiting for a result.
    #[error("no pending tool call with id '{0}'")]
    UnknownToolCall(String),
    /// A new turn was asked for while tool calls still wait for results
    /// (manual mode): answer them with `add_tool_result` first.
    #[error("tool calls still waiting for results: {}", .0.join(", "))]
    UnansweredToolCalls(Vec<String>),
    /// `continue_turn` before any `query`.
    #[error("nothing to continue: call query() first")]
    NothingToContinue,
    /// The engine task ended abnormally (a panic in a tool or hook).
    #[error("the run ended abnormally: {0}")]
    Aborted(String),
}

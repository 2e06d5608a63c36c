//! What the client yields ([`Block`]) and keeps ([`Message`]).

use serde_json::Value;
use windlass_engine::StopReason;
use windlass_protocol::Usage;

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The call id; answer it with [`Client::add_tool_result`](super::Client::add_tool_result).
    pub id: String,
    /// The name of the tool the model called.
    pub name: String,
    /// The arguments the tool runs with: the model's, or a `PreToolUse`
    /// hook's rewrite. A JSON string when the model's text is not JSON.
    pub input: Value,
}

/// Why a tool call produced no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The model named a tool the agent does not have.
    UnknownTool,
    /// A `PreToolUse` hook blocked it.
    Blocked,
    /// The tool ran and failed (its error, bad arguments, a timeout), or a
    /// `PostToolUse` hook turned its result into an error.
    Failed,
}

/// How a run (a query or a continuation) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Termination {
    /// The model answered without asking for more tools.
    Completed,
    /// Manual mode: the model asked for tools; answer them with
    /// `add_tool_result`, then `continue_turn`.
    AwaitingToolResults,
    /// Auto mode: `max_tool_iterations` model turns ran and the last one still
    /// asked for tools (they ran; the model did not see their results).
    MaxIterations {
        /// The `max_tool_iterations` that was reached.
        limit: u32,
    },
    /// Ended early for another reason: `max_output_tokens`, `content_filter`,
    /// `max_tool_calls`, `max_response_time`, `tool_error_threshold`, a policy's stop.
    Incomplete {
        /// Which limit or policy ended the run.
        reason: StopReason,
    },
    /// [`Client::interrupt`](super::Client::interrupt) was called.
    Interrupted,
    /// The upstream failed (unreachable, timed out, an error status).
    Failed {
        /// The upstream's error code.
        code: String,
        /// The upstream's error message.
        message: String,
    },
}

impl Termination {
    /// Whether the model gave its final answer.
    pub fn is_completed(&self) -> bool {
        matches!(self, Termination::Completed)
    }
}

/// One piece of the stream [`Client::receive`](super::Client::receive) yields, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Block {
    /// Assistant text, as it arrives (a delta; concatenate them).
    Text(String),
    /// Reasoning text from models that stream it, as it arrives.
    Reasoning(String),
    /// The model called a tool. Yielded in both modes, before the call runs.
    ToolUse(ToolUse),
    /// Auto mode: a tool's result, as the model will see it.
    ToolResult {
        /// The call id, as in the [`ToolUse`] that asked for it.
        id: String,
        /// The tool's name.
        name: String,
        /// The result text the model receives.
        content: String,
    },
    /// A call that produced no result: unknown tool, blocked by a hook, or a
    /// failure. In every case the model is told and the loop goes on.
    ToolUseError {
        /// The call id, as in the [`ToolUse`] that asked for it.
        id: String,
        /// The tool's name (as the model sent it, for an unknown tool).
        name: String,
        /// The error text the model receives.
        error: String,
        /// Which kind of failure it was.
        kind: ToolErrorKind,
    },
    /// The last block of every run.
    Done {
        /// How the run ended.
        termination: Termination,
        /// Tokens of every model turn of this run, summed.
        usage: Usage,
        /// Model turns made in this run.
        turns: u32,
        /// Tool calls the model made in this run.
        tool_calls: u32,
        /// The stored response; a later query continues from it.
        response_id: String,
    },
}

impl Block {
    /// The text of a `Text` block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Block::Text(t) => Some(t),
            _ => None,
        }
    }

    /// Whether this is the last block of a run ([`Block::Done`]).
    pub fn is_done(&self) -> bool {
        matches!(self, Block::Done { .. })
    }
}

/// One entry of [`Client::history`](super::Client::history).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// The prompt as sent (after any `UserPromptSubmit` rewrite).
    User {
        /// The prompt text.
        content: String,
    },
    /// One model turn: its text and the tool calls it made (with the
    /// model's own arguments, before any `PreToolUse` rewrite).
    Assistant {
        /// The assistant's text of that turn.
        content: String,
        /// The tool calls of that turn, in order.
        tool_calls: Vec<ToolUse>,
    },
    /// A tool result the model received (from the engine or `add_tool_result`).
    ToolResult {
        /// The id of the call it answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The result text.
        content: String,
        /// Whether the result reports a failure.
        is_error: bool,
    },
}

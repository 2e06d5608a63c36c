//! What a run reports when it ends: the response, a typed termination and
//! the loop's counts, so surfaces translate instead of re-deriving.

use std::collections::BTreeSet;

use windlass_protocol::ResponseResource;

use crate::error::RunFailure;
use crate::ports::agent::trace::Trace;

/// Why the loop stopped before the model's final answer. The response's
/// `incomplete_details.reason` is [`StopReason::as_str`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The model-turn limit was reached.
    MaxTurns,
    /// The server-side tool-call budget ran out.
    MaxToolCalls,
    /// The wall-clock limit of the response passed.
    MaxResponseTime,
    /// The model hit `max_output_tokens`.
    MaxOutputTokens,
    /// The upstream's content filter stopped the text.
    ContentFilter,
    /// Too many tool calls failed in a row.
    ToolErrorThreshold,
    /// The policy stopped the loop before a turn, with its reason.
    Policy(String),
}

impl StopReason {
    /// The reason as the wire's `incomplete_details.reason` spells it.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::MaxTurns => "max_turns",
            StopReason::MaxToolCalls => "max_tool_calls",
            StopReason::MaxResponseTime => "max_response_time",
            StopReason::MaxOutputTokens => "max_output_tokens",
            StopReason::ContentFilter => "content_filter",
            StopReason::ToolErrorThreshold => "tool_error_threshold",
            StopReason::Policy(reason) => reason,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a run paused for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PauseReason {
    /// The model called tools the client runs.
    ClientCalls,
    /// A call waits for a human approval (`mcp_approval_request`).
    Approval,
}

/// How a run ended, whatever status the wire shows for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Termination {
    /// The model gave its final answer.
    Completed,
    /// Waiting for the client (tool results or approvals).
    Paused(PauseReason),
    /// Stopped early (status `incomplete`, or `completed` with a reason for
    /// `max_tool_calls`).
    Stopped(StopReason),
    /// Failed; the details are in [`RunOutcome::failure`].
    Failed,
    /// Cancelled before it ended (its cancellation token fired: a client's cancel, a disconnect or shutdown).
    Cancelled,
}

/// The loop's counts for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Model turns made.
    pub turns: u32,
    /// Tool calls the model made (whoever ran them, rejected ones included).
    pub tool_calls: u64,
    /// Names of the tools the model called.
    pub tools_used: BTreeSet<String>,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The response as stored: hosted items complete (what the loop
    /// replays). A client sees [`RunOutcome::client_response`].
    pub response: ResponseResource,
    /// How the run ended.
    pub termination: Termination,
    /// Why it failed, when it did.
    pub failure: Option<RunFailure>,
    /// Turns, calls and timings of the run.
    pub stats: RunStats,
    /// The execution trace, persisted beside the response.
    pub trace: Trace,
    /// The request's `include`.
    pub include: Vec<String>,
}

impl RunOutcome {
    /// The response as the client sees it: hosted items cut to what the
    /// request's `include` asked for.
    pub fn client_response(&self) -> ResponseResource {
        let mut r = self.response.clone();
        windlass_protocol::include::present_response(&mut r, &self.include);
        r
    }
}

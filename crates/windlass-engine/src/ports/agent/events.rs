//! Sent by the loop through the sink port: typed data (no trait) for the SDK and the trace.
//!
//! Run events: what the loop did, for surfaces that translate it (the SDK)
//! and for the execution trace. Stream events say what the client sees;
//! these say why.

use std::time::Duration;

use windlass_protocol::Usage;

use super::provider::FinishReason;
use super::tools::{ToolCall, ToolOwner};

/// What the loop did, as it happens: turns, checks, call verdicts and results.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunEvent {
    /// A model turn is about to start (`turn` counts from 0).
    TurnStarted {
        /// The turn's number.
        turn: u32,
    },
    /// A model turn ended.
    TurnFinished(TurnReport),
    /// Who handles a call, decided once per call.
    CallDecided(CallReport),
    /// A call the server handled has its output (run, or rejected).
    CallFinished(CallResult),
    /// The completion check's exchange, which the client's output does not
    /// show: the draft answer, the prompt, the model's answer to it.
    CheckFinished(CheckReport),
}

/// One completion check (or its re-prompt, or a value nudge).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// The model turn that answered the check (a value nudge's: the turn
    /// that wrote the draft).
    pub turn: u32,
    /// The text the model wrote before the check (not shown when the check
    /// found more to do).
    pub draft: String,
    /// What the loop asked.
    pub prompt: String,
    /// The check turn's text (its calls are in the output).
    pub answer: String,
    /// How the check ended.
    pub outcome: CheckOutcome,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CheckOutcome {
    /// Answered without a call: the draft is the final answer.
    Confirmed,
    /// Called tools: the loop goes on, the draft is withdrawn.
    Continued,
    /// Named a missing step without calling: asked again, with a tool call required.
    Reprompted,
    /// `value_check`: the draft left a number of the request unused; it was
    /// withdrawn and a nudge naming the number sent, with a tool call
    /// required (`answer` is empty: the next turn answers it).
    ValueNudge,
}

impl CheckOutcome {
    /// The outcome as the trace spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Confirmed => "confirmed",
            CheckOutcome::Continued => "continued",
            CheckOutcome::Reprompted => "reprompted",
            CheckOutcome::ValueNudge => "value_nudge",
        }
    }
}

/// One finished model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// The turn's number (from 0).
    pub turn: u32,
    /// How long the turn took.
    pub duration: Duration,
    /// The upstream's usage for the turn, when it reported one.
    pub usage: Option<Usage>,
    /// Why the model stopped, when it said.
    pub finish: Option<FinishReason>,
    /// Tool calls the model made in this turn.
    pub tool_calls: usize,
    /// The turn answered the completion check's verification prompt.
    pub verification: bool,
    /// Why the turn did not finish: the failure's code (`cancelled` when
    /// it was cancelled); `None` for a finished turn.
    pub error: Option<&'static str>,
}

/// The decision on one call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReport {
    /// The model turn that made the call; `None` for calls of the parent
    /// response a continuation settles.
    pub turn: Option<u32>,
    /// The call as the model made it.
    pub call: ToolCall,
    /// `None`: not a tool of this request.
    pub owner: Option<ToolOwner>,
    /// What the loop decided to do with it.
    pub verdict: CallVerdict,
    /// The policy rule that decided, when the policy names one.
    pub rule: Option<String>,
}

/// What happens to a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallVerdict {
    /// The server runs it with these arguments (the model's or the policy's).
    Run {
        /// The JSON arguments the tool runs with.
        arguments: String,
    },
    /// The client runs it, with these arguments.
    Client {
        /// The JSON arguments the client gets.
        arguments: String,
    },
    /// Not run: the message is the error output the model gets.
    Rejected {
        /// Which rule rejected it.
        why: Rejection,
        /// The error output the model gets.
        message: String,
    },
    /// Waits for a human approval (`mcp_approval_request`).
    NeedsApproval,
    /// A server call of a turn that pauses for the client: not checked
    /// yet; the continuation decides it.
    Deferred,
}

/// Why a call was not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rejection {
    /// Not a tool of this request.
    UnknownTool,
    /// Excluded by the request's `allowed_tools`.
    NotAllowed,
    /// The policy denied it.
    PolicyDenied,
    /// The user denied the approval request.
    UserDenied,
    /// Over the per-turn tool-call limit.
    PerTurnLimit,
    /// The policy asked for an approval this kind of tool cannot get.
    ApprovalUnavailable,
    /// The arguments are not a JSON object, or do not fit the tool's schema
    /// (`schema_check`).
    InvalidArguments,
    /// The same tool with the same arguments ran already in this response
    /// (`repeat_guard`): the output repeats its result.
    Repeated,
    /// The call shows the model stalling (`stall_stop`: a repeat, or its
    /// previous step applied again to its own result); the next turn is
    /// asked for the answer.
    Stalled,
}

/// How a server-handled call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The call's id.
    pub call_id: String,
    /// The tool's name as the model called it.
    pub name: String,
    /// Whether it returned a result or an error.
    pub outcome: CallOutcome,
    /// How long it ran.
    pub duration: Duration,
    /// Bytes of the output text the model gets.
    pub output_bytes: usize,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallOutcome {
    /// It returned a result.
    Ok,
    /// It failed; the model got an error output.
    Error,
    /// Rejected before running (see [`Rejection`]).
    Denied,
}

impl CallOutcome {
    /// The outcome as the trace spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Error => "error",
            CallOutcome::Denied => "denied",
        }
    }
}

//! Saved by the loop through the store port: the typed data a stored trace holds (no trait).
//!
//! The execution trace of a response: a step per model turn and an action
//! per tool call. `crate::trace` builds it from the run events; the store
//! keeps it with the response and the server's trace route returns it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The execution trace of one response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The response it traces.
    pub response_id: String,
    /// The model turns, in order.
    pub steps: Vec<TraceStep>,
    /// The tool calls, in order.
    pub actions: Vec<TraceAction>,
    /// The completion check's exchanges (not in the response's output).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<TraceCheck>,
}

/// One completion check: what the model drafted, what it was asked, what
/// it answered, and how the check ended (`confirmed`, `continued`,
/// `reprompted`); or one value nudge (`value_nudge`: the draft withdrawn
/// and the nudge sent; the answer is the next step's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCheck {
    /// The step whose answer was checked.
    pub step: u32,
    /// The text the model wrote before the check.
    pub draft: String,
    /// The verification prompt sent.
    pub prompt: String,
    /// What the model answered.
    pub answer: String,
    /// `confirmed`, `continued`, `reprompted` or `value_nudge`.
    pub outcome: String,
}

/// One model turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    /// The step's number (from 0).
    pub index: u32,
    /// How long the model turn took.
    pub duration_ms: f64,
    /// Input tokens of the turn.
    pub input_tokens: u64,
    /// Output tokens of the turn.
    pub output_tokens: u64,
    /// Input plus output tokens.
    pub total_tokens: u64,
    /// `stop`, `length`, `tool_calls`, `content_filter` or the upstream's word.
    pub finish_reason: Option<String>,
    /// Tool calls the model made in the turn.
    pub tool_calls: usize,
    /// This turn answered the completion check's verification prompt.
    #[serde(default)]
    pub verification: bool,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceAction {
    /// The step that made the call; `None` for a parent's call settled here.
    pub step: Option<u32>,
    /// The call's id.
    pub call_id: String,
    /// The model-visible name of the tool.
    pub tool: String,
    /// `client`, `mcp:<label>`, `builtin`, `local`, or `None` for an unknown tool.
    pub owner: Option<String>,
    /// The arguments, with secret-looking values replaced by `[redacted]`.
    pub arguments: Value,
    /// `allow`, `client`, `deny`, `approval` or `deferred`.
    pub decision: String,
    /// Why a call was denied: `unknown_tool`, `not_allowed`, `policy`, ...
    pub denied_because: Option<String>,
    /// The policy rule that decided, when the policy names one.
    pub rule: Option<String>,
    /// How long the call ran, when it ran.
    pub duration_ms: Option<f64>,
    /// `ok`, `error`, `denied`, or `pending` (the client's, or waiting).
    pub outcome: String,
    /// Size of its output, when it has one.
    pub output_bytes: Option<usize>,
}

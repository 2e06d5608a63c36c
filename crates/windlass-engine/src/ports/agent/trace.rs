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
    pub response_id: String,
    pub steps: Vec<TraceStep>,
    pub actions: Vec<TraceAction>,
}

/// One model turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    pub index: u32,
    pub duration_ms: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    /// `stop`, `length`, `tool_calls`, `content_filter` or the upstream's word.
    pub finish_reason: Option<String>,
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
    pub call_id: String,
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
    pub duration_ms: Option<f64>,
    /// `ok`, `error`, `denied`, or `pending` (the client's, or waiting).
    pub outcome: String,
    pub output_bytes: Option<usize>,
}

//! Loop state and `decide_next_action`: the loop's only decision point.
//!
//! Pure and synchronous so every branch is unit-tested; the driver performs
//! the action and updates the state.

use windlass_protocol::ResponseStatus;

use crate::ports::provider::FinishReason;
use crate::ports::tools::ToolCall;

/// How one pending call will be handled.
#[derive(Debug, Clone, PartialEq)]
pub enum Disposition {
    /// Run server-side, with these (possibly policy-rewritten) arguments.
    Execute { runner: Runner, arguments: String },
    /// The client runs it.
    Client,
    /// Not run; this error text is fed back as its output (not allowed,
    /// unknown tool, denied by policy).
    Reject(String),
    /// Needs a human approval before it may run.
    Approval,
}

/// What runs a server-side call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The executor at this index of the engine's list.
    Executor(usize),
    /// The engine's MCP hub.
    Mcp,
}

/// A call that has no output yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    pub call: ToolCall,
    pub disposition: Disposition,
}

/// Where the loop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing done yet (a continuation may carry pending server calls).
    Start,
    AfterModel,
    AfterTools,
}

/// How a response ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    pub status: ResponseStatus,
    pub incomplete_reason: Option<String>,
}

impl Finish {
    pub fn completed() -> Finish {
        Finish {
            status: ResponseStatus::Completed,
            incomplete_reason: None,
        }
    }

    pub fn incomplete(reason: &str) -> Finish {
        Finish {
            status: ResponseStatus::Incomplete,
            incomplete_reason: Some(reason.to_owned()),
        }
    }
}

/// Why the response pauses for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    ClientCalls,
    Approval,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NextAction {
    CallModel,
    /// Run these calls (in model order); `Reject` ones only get their error output.
    ExecuteTools(Vec<PendingCall>),
    Interrupt(Interrupt),
    Finish(Finish),
}

#[derive(Debug, Clone)]
pub struct LoopState {
    pub phase: Phase,
    /// Model turns made so far.
    pub turns: u32,
    pub max_turns: u32,
    /// Server-executed calls so far.
    pub executed_calls: u64,
    /// Effective `max_tool_calls`.
    pub call_budget: u64,
    /// No executors, or `tool_choice: none`: calls are returned, never run.
    pub single_shot: bool,
    pub pending: Vec<PendingCall>,
    pub last_finish: Option<FinishReason>,
    /// A stop requested from outside the model (policy, wall-clock budget).
    pub stop: Option<Finish>,
}

impl LoopState {
    pub fn new(max_turns: u32, call_budget: u64, single_shot: bool) -> LoopState {
        LoopState {
            phase: Phase::Start,
            turns: 0,
            max_turns: max_turns.max(1),
            executed_calls: 0,
            call_budget,
            single_shot,
            pending: Vec::new(),
            last_finish: None,
            stop: None,
        }
    }
}

/// The next step of the loop.
pub fn decide_next_action(s: &LoopState) -> NextAction {
    if let Some(stop) = &s.stop {
        return NextAction::Finish(stop.clone());
    }
    match s.phase {
        Phase::Start => {
            // A continuation runs the parent's pending server calls first;
            // pending client calls were the client's to answer and go to the model as they are.
            if !s.single_shot && s.pending.iter().any(runs_on_server) {
                plan_execution(s)
            } else {
                NextAction::CallModel
            }
        }
        Phase::AfterModel => {
            if s.pending.is_empty() {
                return NextAction::Finish(finish_for(s.last_finish.as_ref()));
            }
            if s.single_shot {
                return NextAction::Finish(Finish::completed());
            }
            if s.pending
                .iter()
                .any(|p| p.disposition == Disposition::Client)
            {
                return NextAction::Interrupt(Interrupt::ClientCalls);
            }
            if s.pending
                .iter()
                .any(|p| p.disposition == Disposition::Approval)
            {
                return NextAction::Interrupt(Interrupt::Approval);
            }
            plan_execution(s)
        }
        Phase::AfterTools => {
            if !s.pending.is_empty() {
                // Calls left over because the tool-call budget ran out.
                return NextAction::Finish(max_tool_calls());
            }
            if s.turns >= s.max_turns {
                return NextAction::Finish(Finish::incomplete("max_turns"));
            }
            NextAction::CallModel
        }
    }
}

fn runs_on_server(p: &PendingCall) -> bool {
    matches!(
        p.disposition,
        Disposition::Execute { .. } | Disposition::Reject(_)
    )
}

/// Server calls to run now, within the remaining tool-call budget.
fn plan_execution(s: &LoopState) -> NextAction {
    let mut remaining = s.call_budget.saturating_sub(s.executed_calls);
    let wants_execution = s
        .pending
        .iter()
        .any(|p| matches!(p.disposition, Disposition::Execute { .. }));
    if wants_execution && remaining == 0 {
        return NextAction::Finish(max_tool_calls());
    }
    let mut plan = Vec::new();
    for p in s.pending.iter().filter(|p| runs_on_server(p)) {
        if let Disposition::Execute { .. } = p.disposition {
            if remaining == 0 {
                continue;
            }
            remaining -= 1;
        }
        plan.push(p.clone());
    }
    NextAction::ExecuteTools(plan)
}

fn max_tool_calls() -> Finish {
    Finish {
        status: ResponseStatus::Completed,
        incomplete_reason: Some("max_tool_calls".to_owned()),
    }
}

fn finish_for(reason: Option<&FinishReason>) -> Finish {
    match reason {
        Some(FinishReason::Length) => Finish::incomplete("max_output_tokens"),
        Some(FinishReason::ContentFilter) => Finish::incomplete("content_filter"),
        _ => Finish::completed(),
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

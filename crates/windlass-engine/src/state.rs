//! Loop state and `decide_next_action`: the loop's only decision point.
//!
//! Pure and synchronous so every branch is unit-tested; the driver performs
//! the action and updates the state.

use crate::config::LoopMode;
use crate::outcome::StopReason;
use crate::ports::agent::provider::FinishReason;
use crate::ports::agent::tools::ToolCall;

/// How one pending call will be handled.
#[derive(Debug, Clone, PartialEq)]
pub enum Disposition {
    /// Run server-side, with these (possibly policy-rewritten) arguments.
    Execute {
        /// What runs it.
        runner: Runner,
        /// The JSON arguments it runs with.
        arguments: String,
    },
    /// The client runs it.
    Client,
    /// Not run; this error text is fed back as its output (not allowed,
    /// unknown tool, denied by policy or user, over the per-turn limit).
    Reject(String),
    /// Needs a human approval before it may run.
    Approval,
    /// A server call of a turn that pauses for the client: not checked nor
    /// run now; the continuation decides it. (Hosted calls are not
    /// deferred: their items are the client's to see, so they run before
    /// the pause.)
    Deferred,
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
    /// The call as the model made it.
    pub call: ToolCall,
    /// How it will be handled.
    pub disposition: Disposition,
}

/// Where the loop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing done yet (a continuation may carry pending server calls).
    Start,
    /// A model turn just ended.
    AfterModel,
    /// The turn's tool calls just ran.
    AfterTools,
}

/// How a response ends when the loop itself ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// The model gave its final answer.
    Completed,
    /// Stopped early, for this reason.
    Stopped(StopReason),
}

/// Why the response pauses for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The model called client tools: their outputs come with the next request.
    ClientCalls,
    /// An MCP call waits for the client's approval.
    Approval,
}

/// What the driver does next; `decide_next_action` picks it.
#[derive(Debug, Clone, PartialEq)]
pub enum NextAction {
    /// Start a model turn.
    CallModel,
    /// The completion check: ask the model to verify its text-only answer,
    /// then call it again.
    Verify,
    /// The check's answer names a missing step: ask again, and the next
    /// turn must call a tool.
    Reprompt,
    /// `value_check`: the text-only answer leaves a number of the request
    /// unused; it is withdrawn, a nudge naming the number goes upstream and
    /// the next turn must call a tool.
    NudgeValues,
    /// Run these calls (in model order); `Reject` ones only get their error output.
    ExecuteTools(Vec<PendingCall>),
    /// Pause the response for the client.
    Interrupt(Interrupt),
    /// End the response.
    Finish(Finish),
}

/// The completion check of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verification {
    /// Off: a text-only answer is final.
    #[default]
    Off,
    /// On; the verification prompt was not sent yet.
    Armed,
    /// Sent: the next text-only answer is final.
    Sent,
}

/// Where a run stands, everything `decide_next_action` reads.
#[derive(Debug, Clone)]
pub struct LoopState {
    /// What just happened.
    pub phase: Phase,
    /// Model turns made so far.
    pub turns: u32,
    /// Most model turns (`max_tool_iterations`).
    pub max_turns: u32,
    /// Server-executed calls so far.
    pub executed_calls: u64,
    /// Effective `max_tool_calls`.
    pub call_budget: u64,
    /// Whether tools run or the model's calls are returned.
    pub mode: LoopMode,
    /// Calls of the last turn that have no output yet.
    pub pending: Vec<PendingCall>,
    /// Why the last model turn ended.
    pub last_finish: Option<FinishReason>,
    /// Tool calls the model made in this response.
    pub model_calls: u64,
    /// Server-handled calls that failed in a row (a success resets it).
    pub consecutive_errors: u32,
    /// Stop after this many consecutive failed calls.
    pub error_threshold: Option<u32>,
    /// Where the completion check stands.
    pub verification: Verification,
    /// The completion check's answer names a step still to do and a
    /// re-prompt is due (`require_after_check`; the driver reads the answer).
    pub missing_step: bool,
    /// A stop requested from outside the model (policy, wall-clock budget).
    pub stop: Option<Finish>,
    /// Server-handled calls whose output was not an error.
    pub succeeded_calls: u64,
    /// `value_check`: a number the request mentions is used by no tool
    /// call's arguments or result (the driver sets it before each turn; a
    /// text-only turn adds neither).
    pub unused_values: bool,
    /// Value nudges sent in this response.
    pub value_nudges: u32,
    /// The last turn was asked for the answer (the stall stop's
    /// `tool_choice: "none"`): its answer stands.
    pub answer_forced: bool,
}

/// Most value nudges in one response.
pub const MAX_VALUE_NUDGES: u32 = 2;

impl LoopState {
    /// The state at the start of a run.
    pub fn new(max_turns: u32, call_budget: u64, mode: LoopMode) -> LoopState {
        LoopState {
            phase: Phase::Start,
            turns: 0,
            max_turns: max_turns.max(1),
            executed_calls: 0,
            call_budget,
            mode,
            pending: Vec::new(),
            last_finish: None,
            model_calls: 0,
            consecutive_errors: 0,
            error_threshold: None,
            verification: Verification::Off,
            missing_step: false,
            stop: None,
            succeeded_calls: 0,
            unused_values: false,
            value_nudges: 0,
            answer_forced: false,
        }
    }

    fn single_shot(&self) -> bool {
        self.mode == LoopMode::SingleShot
    }

    /// Whether a text-only answer now would get a value nudge, the turn
    /// limit aside (the driver holds the turn's events while it would).
    pub fn value_nudge_armed(&self) -> bool {
        self.unused_values
            && self.value_nudges < MAX_VALUE_NUDGES
            && self.succeeded_calls > 0
            && !self.answer_forced
            && !self.single_shot()
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
            if !s.single_shot() && s.pending.iter().any(runs_on_server) {
                plan_execution(s)
            } else if waits_for_approval(s) {
                NextAction::Interrupt(Interrupt::Approval)
            } else {
                NextAction::CallModel
            }
        }
        Phase::AfterModel => {
            if s.pending.is_empty() {
                return answered(s);
            }
            if s.single_shot() {
                return NextAction::Finish(Finish::Completed);
            }
            // A turn that pauses first runs the calls it decided to run now
            // (hosted calls: its other server calls are deferred, its
            // refusals answered by the continuation), then pauses.
            if pauses(s) && s.pending.iter().any(executes) {
                return plan(s, executes);
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
            // A continuation's call the policy wants approved: pause once
            // the others ran.
            if waits_for_approval(s) {
                return NextAction::Interrupt(Interrupt::Approval);
            }
            // A pausing turn's client calls, once its hosted calls ran.
            if s.pending
                .iter()
                .any(|p| p.disposition == Disposition::Client)
            {
                return NextAction::Interrupt(Interrupt::ClientCalls);
            }
            if !s.pending.is_empty() {
                // Calls left over because the tool-call budget ran out.
                return NextAction::Finish(Finish::Stopped(StopReason::MaxToolCalls));
            }
            if s.error_threshold
                .is_some_and(|n| n > 0 && s.consecutive_errors >= n)
            {
                return NextAction::Finish(Finish::Stopped(StopReason::ToolErrorThreshold));
            }
            if s.turns >= s.max_turns {
                return NextAction::Finish(Finish::Stopped(StopReason::MaxTurns));
            }
            NextAction::CallModel
        }
    }
}

/// A text-only answer: final, unless a number of the request is still
/// unused (`value_check`) or the completion check asks once more.
fn answered(s: &LoopState) -> NextAction {
    match s.last_finish {
        Some(FinishReason::Length) => {
            return NextAction::Finish(Finish::Stopped(StopReason::MaxOutputTokens))
        }
        Some(FinishReason::ContentFilter) => {
            return NextAction::Finish(Finish::Stopped(StopReason::ContentFilter))
        }
        _ => {}
    }
    let verify = s.verification == Verification::Armed
        && s.model_calls > 0
        && !s.single_shot()
        && s.turns < s.max_turns;
    let reprompt = s.verification == Verification::Sent
        && s.missing_step
        && !s.single_shot()
        && s.turns < s.max_turns;
    // Counting decides before asking: a nudge first, the check after it.
    if s.value_nudge_armed() && s.turns < s.max_turns {
        NextAction::NudgeValues
    } else if verify {
        NextAction::Verify
    } else if reprompt {
        NextAction::Reprompt
    } else {
        NextAction::Finish(Finish::Completed)
    }
}

/// The client or a human must answer before the loop goes on.
fn pauses(s: &LoopState) -> bool {
    s.pending
        .iter()
        .any(|p| matches!(p.disposition, Disposition::Client | Disposition::Approval))
}

fn waits_for_approval(s: &LoopState) -> bool {
    s.pending
        .iter()
        .any(|p| p.disposition == Disposition::Approval)
}

fn runs_on_server(p: &PendingCall) -> bool {
    matches!(
        p.disposition,
        Disposition::Execute { .. } | Disposition::Reject(_)
    )
}

fn executes(p: &PendingCall) -> bool {
    matches!(p.disposition, Disposition::Execute { .. })
}

/// Server calls to run now, within the remaining tool-call budget.
fn plan_execution(s: &LoopState) -> NextAction {
    plan(s, runs_on_server)
}

/// The calls `which` picks, within the remaining tool-call budget.
fn plan(s: &LoopState, which: fn(&PendingCall) -> bool) -> NextAction {
    let mut remaining = s.call_budget.saturating_sub(s.executed_calls);
    let wants_execution = s
        .pending
        .iter()
        .any(|p| matches!(p.disposition, Disposition::Execute { .. }));
    if wants_execution && remaining == 0 {
        return NextAction::Finish(Finish::Stopped(StopReason::MaxToolCalls));
    }
    let mut plan = Vec::new();
    for p in s.pending.iter().filter(|p| which(p)) {
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

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

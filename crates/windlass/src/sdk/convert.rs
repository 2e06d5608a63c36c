//! One run's engine signals turned into [`Block`]s and conversation history.
//!
//! The engine says what happened (stream events: items and text; run
//! events: each call's verdict; the outcome: counts and a typed
//! termination); this only translates.

use std::collections::{HashMap, HashSet, VecDeque};

use tokio_util::sync::CancellationToken;
use windlass_engine::{
    mcp_tool_name, CallReport, CallVerdict, Rejection, RunEvent, RunOutcome, StopReason,
    Termination as EngineTermination, Trace,
};
use windlass_protocol::{
    EventData, FunctionCall, FunctionCallOutput, Item, ItemStatus, McpCall, ResponseResource, Role,
    ToolOutput,
};

use super::block::{Block, Message, Termination, ToolErrorKind, ToolUse};
use super::hooks::Signal;
use super::tool::arguments_value;

#[derive(Default)]
pub(super) struct State {
    pub(super) last_response_id: Option<String>,
    pub(super) last_response: Option<ResponseResource>,
    pub(super) last_trace: Option<Trace>,
    pub(super) history: Vec<Message>,
    /// Manual mode: calls waiting for the caller's result, in order.
    pub(super) pending: Vec<ToolUse>,
    /// Results to send with the next run.
    pub(super) results: Vec<Item>,
    /// Cancels the current run.
    pub(super) cancel: Option<CancellationToken>,
    /// Tool name of every call seen, by call id.
    pub(super) names: HashMap<String, String>,
    /// Calls whose `ToolUseError` was already yielded (rejected): their
    /// error output, when the engine writes it, is not reported twice.
    pub(super) reported: HashSet<String>,
}

pub(super) type RunResult = RunOutcome;

/// Turns one run's signals into blocks and history entries.
pub(super) struct Converter {
    auto: bool,
    /// A `PreToolUse` hook may rewrite calls: a `ToolUse` waits for the
    /// verdict. Without one, it is yielded as soon as the call is complete.
    gated: bool,
    limit: u32,
    /// Calls whose `ToolUse` is not yielded yet, in model order.
    held: VecDeque<FunctionCall>,
    /// Calls yielded before their verdict arrived.
    yielded: HashMap<String, ToolUse>,
    verdicts: HashMap<String, CallVerdict>,
    /// Rejected calls of this run and the error output the model gets.
    rejected: Vec<(String, String, String)>,
    /// A model turn started since the last assistant message: the next
    /// one is a new history entry.
    new_turn: bool,
}

impl Converter {
    pub(super) fn new(auto: bool, gated: bool, limit: u32) -> Converter {
        Converter {
            auto,
            gated,
            limit,
            held: VecDeque::new(),
            yielded: HashMap::new(),
            verdicts: HashMap::new(),
            rejected: Vec::new(),
            new_turn: false,
        }
    }

    pub(super) fn on_signal(&mut self, signal: Signal, st: &mut State, out: &mut VecDeque<Block>) {
        match signal {
            Signal::Run(RunEvent::TurnStarted { .. }) => {
                self.flush(st, out);
                self.new_turn = true;
            }
            Signal::Run(RunEvent::CallDecided(report)) => self.decided(report, st, out),
            Signal::Run(_) => {}
            Signal::Event(ev) => self.on_event(ev.data, st, out),
        }
    }

    fn decided(&mut self, report: CallReport, st: &mut State, out: &mut VecDeque<Block>) {
        let id = report.call.call_id.clone();
        if let CallVerdict::Rejected { message, .. } = &report.verdict {
            self.rejected
                .push((id.clone(), report.call.name.clone(), message.clone()));
        }
        self.verdicts.insert(id.clone(), report.verdict);
        match self.yielded.remove(&id) {
            Some(call) => self.settle(call, st, out),
            None => self.release(st, out),
        }
    }

    fn on_event(&mut self, data: EventData, st: &mut State, out: &mut VecDeque<Block>) {
        match data {
            EventData::OutputTextDelta { delta, .. } | EventData::RefusalDelta { delta, .. } => {
                self.flush(st, out);
                out.push_back(Block::Text(delta));
            }
            EventData::ReasoningDelta { delta, .. } => {
                self.flush(st, out);
                out.push_back(Block::Reasoning(delta));
            }
            EventData::OutputItemDone { item, .. } => match item {
                Item::Message(m) if m.role == Role::Assistant => {
                    self.flush(st, out);
                    let text = m.content.joined_text();
                    let same_turn = !std::mem::take(&mut self.new_turn);
                    match st.history.last_mut() {
                        Some(Message::Assistant {
                            content,
                            tool_calls,
                        }) if same_turn && tool_calls.is_empty() => content.push_str(&text),
                        _ => st.history.push(Message::Assistant {
                            content: text,
                            tool_calls: Vec::new(),
                        }),
                    }
                }
                Item::FunctionCall(c) => {
                    let fresh = std::mem::take(&mut self.new_turn);
                    st.names.insert(c.call_id.clone(), c.name.clone());
                    let call = ToolUse {
                        id: c.call_id.clone(),
                        name: c.name.clone(),
                        input: arguments_value(&c.arguments),
                    };
                    record_call(st, call, fresh);
                    self.held.push_back(c);
                    self.release(st, out);
                }
                Item::McpCall(c) => self.mcp_call(c, st, out),
                Item::FunctionCallOutput(o) => {
                    self.flush(st, out);
                    let name = st.names.get(&o.call_id).cloned().unwrap_or_default();
                    let content = o.output.joined_text();
                    let is_error = o.is_error == Some(true);
                    st.history.push(Message::ToolResult {
                        call_id: o.call_id.clone(),
                        name: name.clone(),
                        content: content.clone(),
                        is_error,
                    });
                    if st.reported.remove(&o.call_id) {
                        return;
                    }
                    out.push_back(result_block(o.call_id, name, content, is_error));
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// A finished `mcp_call`: the engine ran it, so its use and its result
    /// arrive together.
    fn mcp_call(&mut self, c: McpCall, st: &mut State, out: &mut VecDeque<Block>) {
        self.flush(st, out);
        if c.output.is_none() && c.error.is_none() {
            return; // paused with the turn: it runs on continuation
        }
        let name = mcp_tool_name(&c.server_label, &c.name);
        let call = ToolUse {
            id: c.id.clone(),
            name: name.clone(),
            input: arguments_value(&c.arguments),
        };
        let fresh = std::mem::take(&mut self.new_turn);
        record_call(st, call.clone(), fresh);
        out.push_back(Block::ToolUse(call));
        let (content, is_error) = match (&c.error, c.output) {
            (Some(e), _) => (e.text(), true),
            (None, o) => (o.unwrap_or_default(), false),
        };
        st.history.push(Message::ToolResult {
            call_id: c.id.clone(),
            name: name.clone(),
            content: content.clone(),
            is_error,
        });
        out.push_back(result_block(c.id, name, content, is_error));
    }

    /// Yields the held calls in order, as far as their verdicts are known
    /// (or all of them when no hook can rewrite a call).
    fn release(&mut self, st: &mut State, out: &mut VecDeque<Block>) {
        while let Some(front) = self.held.front() {
            if self.gated && !self.verdicts.contains_key(&front.call_id) {
                break;
            }
            if let Some(c) = self.held.pop_front() {
                self.emit(c, st, out);
            }
        }
    }

    fn flush(&mut self, st: &mut State, out: &mut VecDeque<Block>) {
        while let Some(c) = self.held.pop_front() {
            self.emit(c, st, out);
        }
    }

    /// Yields a call's `ToolUse` (with the arguments it runs with, once
    /// known), then what its verdict means for the caller.
    fn emit(&mut self, c: FunctionCall, st: &mut State, out: &mut VecDeque<Block>) {
        let input = match self.verdicts.get(&c.call_id) {
            Some(CallVerdict::Run { arguments } | CallVerdict::Client { arguments }) => {
                arguments_value(arguments)
            }
            _ => arguments_value(&c.arguments),
        };
        let call = ToolUse {
            id: c.call_id.clone(),
            name: c.name.clone(),
            input,
        };
        out.push_back(Block::ToolUse(call.clone()));
        if self.verdicts.contains_key(&c.call_id) {
            self.settle(call, st, out);
        } else {
            self.yielded.insert(c.call_id, call);
        }
    }

    /// A yielded call's verdict: an error block for a rejected call, a
    /// pending call in manual mode for one the caller runs.
    fn settle(&mut self, call: ToolUse, st: &mut State, out: &mut VecDeque<Block>) {
        match self.verdicts.get(&call.id) {
            Some(CallVerdict::Rejected { why, message }) => {
                let (kind, error) = match why {
                    Rejection::UnknownTool => (
                        ToolErrorKind::UnknownTool,
                        format!("Unknown tool: {}", call.name),
                    ),
                    Rejection::PolicyDenied => (ToolErrorKind::Blocked, message.clone()),
                    _ => (ToolErrorKind::Failed, message.clone()),
                };
                st.reported.insert(call.id.clone());
                out.push_back(Block::ToolUseError {
                    id: call.id,
                    name: call.name,
                    error,
                    kind,
                });
            }
            Some(CallVerdict::Client { .. }) if !self.auto => st.pending.push(call),
            _ => {}
        }
    }

    /// The run ended: record it and yield `Done`.
    pub(super) fn finish(
        &mut self,
        result: Result<RunResult, String>,
        st: &mut State,
        out: &mut VecDeque<Block>,
    ) {
        self.flush(st, out);
        st.cancel = None;
        let outcome = match result {
            Ok(r) => r,
            Err(e) => {
                st.pending.clear();
                out.push_back(Block::Done {
                    termination: Termination::Failed {
                        code: "aborted".into(),
                        message: format!("the run ended abnormally: {e}"),
                    },
                    usage: Default::default(),
                    turns: 0,
                    tool_calls: 0,
                    response_id: String::new(),
                });
                return;
            }
        };
        let termination = self.termination(&outcome);
        if let Termination::MaxIterations { limit } = termination {
            tracing::warn!(
                limit,
                "hit max_tool_iterations ({limit}); raise it if this is expected"
            );
        }
        let response = outcome.response;
        if termination == Termination::AwaitingToolResults {
            self.answer_rejected(&response, st);
        } else {
            // Nothing waits for the caller after a failure or interrupt.
            st.pending.clear();
        }
        if response.store {
            st.last_response_id = Some(response.id.clone());
        }
        out.push_back(Block::Done {
            termination,
            usage: response.usage.unwrap_or_default(),
            turns: outcome.stats.turns,
            tool_calls: u32::try_from(outcome.stats.tool_calls).unwrap_or(u32::MAX),
            response_id: response.id.clone(),
        });
        st.last_response = Some(response);
        st.last_trace = Some(outcome.trace);
    }

    /// A paused run leaves its rejected calls without output (the engine
    /// writes none while waiting for the caller): their rejection goes with
    /// the next run as their result, so the model sees why.
    fn answer_rejected(&mut self, response: &ResponseResource, st: &mut State) {
        let answered: HashSet<&str> = response
            .output
            .iter()
            .filter_map(|i| match i {
                Item::FunctionCallOutput(o) => Some(o.call_id.as_str()),
                _ => None,
            })
            .collect();
        let open: HashSet<&str> = response
            .output
            .iter()
            .filter_map(|i| match i {
                Item::FunctionCall(c) => Some(c.call_id.as_str()),
                _ => None,
            })
            .collect();
        for (id, name, message) in std::mem::take(&mut self.rejected) {
            if answered.contains(id.as_str()) || !open.contains(id.as_str()) {
                continue;
            }
            st.results
                .push(Item::FunctionCallOutput(FunctionCallOutput {
                    id: None,
                    call_id: id.clone(),
                    output: ToolOutput::Text(message.clone()),
                    status: Some(ItemStatus::Completed),
                    is_error: Some(true),
                }));
            st.history.push(Message::ToolResult {
                call_id: id,
                name,
                content: message,
                is_error: true,
            });
        }
    }

    fn termination(&self, outcome: &RunOutcome) -> Termination {
        match &outcome.termination {
            EngineTermination::Completed => Termination::Completed,
            EngineTermination::Paused(_) => Termination::AwaitingToolResults,
            EngineTermination::Stopped(StopReason::MaxTurns) => {
                Termination::MaxIterations { limit: self.limit }
            }
            EngineTermination::Stopped(reason) => Termination::Incomplete {
                reason: reason.clone(),
            },
            EngineTermination::Cancelled => Termination::Interrupted,
            _ => {
                let (code, message) = match &outcome.failure {
                    Some(f) => (f.code().to_owned(), f.message.clone()),
                    None => ("failed".into(), "the run failed".into()),
                };
                Termination::Failed { code, message }
            }
        }
    }
}

/// Adds a call to the assistant turn it belongs to in the history
/// (`fresh`: the first item of a new model turn).
fn record_call(st: &mut State, call: ToolUse, fresh: bool) {
    match st.history.last_mut() {
        Some(Message::Assistant { tool_calls, .. }) if !fresh => tool_calls.push(call),
        _ => st.history.push(Message::Assistant {
            content: String::new(),
            tool_calls: vec![call],
        }),
    }
}

/// The block for a call's outcome: its result, or the error it reported.
fn result_block(id: String, name: String, content: String, is_error: bool) -> Block {
    if is_error {
        Block::ToolUseError {
            id,
            name,
            error: content,
            kind: ToolErrorKind::Failed,
        }
    } else {
        Block::ToolResult { id, name, content }
    }
}

//! One run's engine signals turned into [`Block`]s and conversation history.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use windlass_engine::upstream::mcp_tool_name;
use windlass_engine::{CallDecision, RunFailure, RunOutcome};
use windlass_protocol::{
    EventData, FunctionCall, Item, McpCall, ResponseResource, ResponseStatus, Role,
};

use super::block::{Block, Message, Termination, ToolErrorKind, ToolUse};
use super::hooks::{output_text, Signal, Verdict};
use super::tool::{arguments_value, ToolRegistry};

#[derive(Default)]
pub(super) struct State {
    pub(super) last_response_id: Option<String>,
    pub(super) last_response: Option<ResponseResource>,
    pub(super) history: Vec<Message>,
    /// Manual mode: calls waiting for the caller's result, in order.
    pub(super) pending: Vec<ToolUse>,
    /// Results to send with the next run.
    pub(super) results: Vec<Item>,
    /// Cancels the current run.
    pub(super) cancel: Option<CancellationToken>,
    /// Tool name of every call seen, by call id.
    pub(super) names: HashMap<String, String>,
    /// Calls whose `ToolUseError` was already yielded (blocked, unknown):
    /// their error output, when the engine writes it, is not reported twice.
    pub(super) reported: HashSet<String>,
    /// `PreToolUse` verdicts of calls still open after the last run.
    pub(super) replay: HashMap<String, CallDecision>,
}

pub(super) type RunResult = (RunOutcome, HashMap<String, CallDecision>);

/// Turns one run's signals into blocks and history entries.
pub(super) struct Converter {
    registry: Arc<ToolRegistry>,
    auto: bool,
    /// A `PreToolUse` hook may block or rewrite calls: a `ToolUse` waits
    /// for the verdict. Without one, it is yielded as soon as the call is
    /// complete.
    gated: bool,
    limit: u32,
    /// Calls whose `ToolUse` waits for the `PreToolUse` verdict (it may
    /// rewrite the input), in model order.
    held: VecDeque<FunctionCall>,
    verdicts: HashMap<String, Verdict>,
    turns: u32,
    tool_calls: u32,
}

impl Converter {
    pub(super) fn new(
        registry: Arc<ToolRegistry>,
        auto: bool,
        gated: bool,
        limit: u32,
    ) -> Converter {
        Converter {
            registry,
            auto,
            gated,
            limit,
            held: VecDeque::new(),
            verdicts: HashMap::new(),
            turns: 0,
            tool_calls: 0,
        }
    }

    pub(super) fn on_signal(&mut self, signal: Signal, st: &mut State, out: &mut VecDeque<Block>) {
        match signal {
            Signal::TurnStarted => {
                self.flush(st, out);
                self.turns += 1;
            }
            Signal::Decided { call_id, decision } => {
                self.verdicts.insert(call_id, decision);
                self.release(st, out);
            }
            Signal::Event(ev) => self.on_event(ev.data, st, out),
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
                    match st.history.last_mut() {
                        Some(Message::Assistant {
                            content,
                            tool_calls,
                        }) if tool_calls.is_empty() => content.push_str(&text),
                        _ => st.history.push(Message::Assistant {
                            content: text,
                            tool_calls: Vec::new(),
                        }),
                    }
                }
                Item::FunctionCall(c) => {
                    self.tool_calls += 1;
                    st.names.insert(c.call_id.clone(), c.name.clone());
                    let call = ToolUse {
                        id: c.call_id.clone(),
                        name: c.name.clone(),
                        input: arguments_value(&c.arguments),
                    };
                    record_call(st, call);
                    self.held.push_back(c);
                    self.release(st, out);
                }
                Item::McpCall(c) => self.mcp_call(c, st, out),
                Item::FunctionCallOutput(o) => {
                    self.flush(st, out);
                    let name = st.names.get(&o.call_id).cloned().unwrap_or_default();
                    let content = output_text(&o.output);
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
                    let kind = if self.registry.contains(&name) {
                        ToolErrorKind::Failed
                    } else {
                        ToolErrorKind::UnknownTool
                    };
                    out.push_back(result_block(o.call_id, name, content, is_error, kind));
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
        self.tool_calls += 1;
        let name = mcp_tool_name(&c.server_label, &c.name);
        let call = ToolUse {
            id: c.id.clone(),
            name: name.clone(),
            input: arguments_value(&c.arguments),
        };
        record_call(st, call.clone());
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
        out.push_back(result_block(
            c.id,
            name,
            content,
            is_error,
            ToolErrorKind::Failed,
        ));
    }

    /// Yields the held calls whose verdict is known (unknown tools get none,
    /// and none is awaited without `PreToolUse` hooks).
    fn release(&mut self, st: &mut State, out: &mut VecDeque<Block>) {
        while let Some(front) = self.held.front() {
            let ready = !self.gated
                || self.verdicts.contains_key(&front.call_id)
                || !self.registry.contains(&front.name);
            if !ready {
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

    fn emit(&mut self, c: FunctionCall, st: &mut State, out: &mut VecDeque<Block>) {
        let verdict = self.verdicts.get(&c.call_id);
        let input = match verdict {
            Some(Verdict::Rewrite(v)) => v.clone(),
            _ => arguments_value(&c.arguments),
        };
        let call = ToolUse {
            id: c.call_id.clone(),
            name: c.name.clone(),
            input,
        };
        out.push_back(Block::ToolUse(call.clone()));
        let error = if !self.registry.contains(&c.name) {
            Some((
                format!("Unknown tool: {}", c.name),
                ToolErrorKind::UnknownTool,
            ))
        } else if let Some(Verdict::Block(reason)) = verdict {
            Some((format!("Blocked: {reason}"), ToolErrorKind::Blocked))
        } else {
            None
        };
        match error {
            Some((error, kind)) => {
                st.reported.insert(c.call_id.clone());
                out.push_back(Block::ToolUseError {
                    id: c.call_id,
                    name: c.name,
                    error,
                    kind,
                });
            }
            None if !self.auto => st.pending.push(call),
            None => {}
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
        let (outcome, decided) = match result {
            Ok(r) => r,
            Err(e) => {
                st.pending.clear();
                out.push_back(Block::Done {
                    termination: Termination::Failed {
                        code: "aborted".into(),
                        message: format!("the run ended abnormally: {e}"),
                    },
                    usage: Default::default(),
                    turns: self.turns,
                    tool_calls: self.tool_calls,
                    response_id: String::new(),
                });
                return;
            }
        };
        let response = outcome.response;
        let termination = termination(&response, outcome.failure.as_ref(), self.limit);
        if let Termination::MaxIterations { limit } = termination {
            tracing::warn!(
                limit,
                "hit max_tool_iterations ({limit}); raise it if this is expected"
            );
        }
        // Calls without an output stay open in the stored response; a
        // continuation re-checks them with the same verdicts.
        let answered: HashSet<&str> = response
            .output
            .iter()
            .filter_map(|i| match i {
                Item::FunctionCallOutput(o) => Some(o.call_id.as_str()),
                _ => None,
            })
            .collect();
        st.replay = decided
            .into_iter()
            .filter(|(id, _)| !answered.contains(id.as_str()))
            .collect();
        if termination != Termination::AwaitingToolResults {
            // Nothing waits for the caller after a failure or interrupt.
            st.pending.clear();
        }
        if response.store {
            st.last_response_id = Some(response.id.clone());
        }
        out.push_back(Block::Done {
            termination,
            usage: response.usage.unwrap_or_default(),
            turns: self.turns,
            tool_calls: self.tool_calls,
            response_id: response.id.clone(),
        });
        st.last_response = Some(response);
    }
}

/// Adds a call to the assistant turn it belongs to in the history.
fn record_call(st: &mut State, call: ToolUse) {
    match st.history.last_mut() {
        Some(Message::Assistant { tool_calls, .. }) => tool_calls.push(call),
        _ => st.history.push(Message::Assistant {
            content: String::new(),
            tool_calls: vec![call],
        }),
    }
}

/// The block for a call's outcome: its result, or an error of `kind`.
fn result_block(
    id: String,
    name: String,
    content: String,
    is_error: bool,
    kind: ToolErrorKind,
) -> Block {
    if is_error {
        Block::ToolUseError {
            id,
            name,
            error: content,
            kind,
        }
    } else {
        Block::ToolResult { id, name, content }
    }
}

fn termination(r: &ResponseResource, failure: Option<&RunFailure>, limit: u32) -> Termination {
    let reason = r.incomplete_details.as_ref().map(|d| d.reason.clone());
    match r.status {
        ResponseStatus::Completed => match reason {
            Some(reason) => Termination::Incomplete { reason },
            None => Termination::Completed,
        },
        ResponseStatus::RequiresAction => Termination::AwaitingToolResults,
        ResponseStatus::Incomplete => match reason.as_deref() {
            Some("max_turns") => Termination::MaxIterations { limit },
            _ => Termination::Incomplete {
                reason: reason.unwrap_or_default(),
            },
        },
        ResponseStatus::Cancelled => Termination::Interrupted,
        ResponseStatus::Failed | ResponseStatus::Queued | ResponseStatus::InProgress => {
            let (code, message) = match (&r.error, failure) {
                (Some(e), _) => (e.code.clone(), e.message.clone()),
                (None, Some(f)) => (f.code.clone(), f.message.clone()),
                (None, None) => ("failed".into(), format!("run ended {:?}", r.status)),
            };
            Termination::Failed { code, message }
        }
    }
}

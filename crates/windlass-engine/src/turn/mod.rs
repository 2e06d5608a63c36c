//! One model turn: upstream deltas become output items and their events.
//!
//! Items open when their first delta arrives and close (content part, then
//! item) when another kind of item starts or the turn ends, so every item is
//! opened and closed exactly once, with its final text in the `done` events.

mod calls;
mod summary;

use std::collections::{BTreeMap, HashMap, HashSet};

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ContentPart, EventData, Item, ItemStatus, LogProb, Message, MessageContent, Reasoning,
    RefusalPart, Role, TextPart, Usage,
};

use crate::client_shapes::typed::TypedKind;
use crate::emitter::Emitter;
use crate::naming::mcp_tool_name;
use crate::ports::agent::provider::{FinishReason, ModelEvent, ModelStream, ProviderError};
use crate::ports::agent::tools::ToolCall;
use crate::tooling::ToolSet;
use calls::{close_calls, tool_delta};

pub(crate) struct TurnOutcome {
    pub calls: Vec<ToolCall>,
    /// Calls that became `mcp_approval_request` items.
    pub approvals: HashSet<String>,
    pub finish: Option<FinishReason>,
    pub usage: Option<Usage>,
}

pub(crate) enum TurnError {
    Provider(ProviderError),
    Cancelled,
}

/// Which content part of the open message is being written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    Text,
    Refusal,
}

#[derive(Default)]
pub(crate) struct Open {
    pub reasoning: Option<usize>,
    /// The open summary part of the open reasoning item.
    pub summary: summary::OpenPart,
    pub message: Option<(usize, Option<(usize, PartKind)>)>,
    /// Upstream tool-call index -> output index.
    pub calls: BTreeMap<u32, usize>,
    /// Calls of OpenAI's client-executed types, gathered unannounced until
    /// their arguments are complete (by output index).
    pub typed: BTreeMap<usize, TypedKind>,
    /// The arguments of hosted calls (their items have no field for them),
    /// by output index.
    pub hosted_args: HashMap<usize, String>,
    /// The code of open `code_interpreter` calls, streamed as it arrives.
    pub code: HashMap<usize, crate::hosted::code_stream::CodeStream>,
}

pub(crate) async fn run_turn(
    out: &mut Emitter<'_>,
    mut stream: ModelStream,
    tools: &ToolSet,
    cancel: &CancellationToken,
) -> (Result<TurnOutcome, TurnError>, Vec<usize>) {
    let mut open = Open::default();
    let mut call_order: Vec<usize> = Vec::new();
    let mut finish = None;
    let mut usage = None;
    let result = loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => break Err(TurnError::Cancelled),
            next = stream.next() => next,
        };
        match next {
            None => break Ok(()),
            Some(Err(e)) => break Err(TurnError::Provider(e)),
            Some(Ok(ev)) => match ev {
                ModelEvent::ReasoningDelta(d) => reasoning_delta(out, &mut open, d).await,
                ModelEvent::ReasoningEncrypted(e) => reasoning_sealed(out, &mut open, e).await,
                ModelEvent::ReasoningSummaryDelta {
                    summary_index,
                    delta,
                } => {
                    let idx = open_reasoning(out, &mut open).await;
                    summary::summary_delta(out, &mut open.summary, idx, summary_index, delta).await
                }
                ModelEvent::TextDelta(d) => {
                    text_delta(out, &mut open, d, PartKind::Text, Vec::new()).await
                }
                ModelEvent::TextDeltaLogprobs { delta, logprobs } => {
                    text_delta(out, &mut open, delta, PartKind::Text, logprobs).await
                }
                ModelEvent::RefusalDelta(d) => {
                    text_delta(out, &mut open, d, PartKind::Refusal, Vec::new()).await
                }
                ModelEvent::ToolCallDelta {
                    index,
                    id,
                    name,
                    arguments,
                } => {
                    let idx = tool_delta(out, &mut open, tools, index, id, name, arguments).await;
                    if !call_order.contains(&idx) {
                        call_order.push(idx);
                    }
                }
                ModelEvent::Usage(u) => usage = Some(u),
                ModelEvent::Finished(r) => finish = Some(r),
            },
        }
    };
    drop(stream);
    // The last model turn decides: a later turn that ended on its own
    // clears what an earlier one said.
    out.response.stop_sequence = match &finish {
        Some(FinishReason::StopSequence(s)) => Some(s.clone()),
        _ => None,
    };
    let status = match (&result, &finish) {
        (Ok(()), Some(FinishReason::Length)) | (Err(_), _) => ItemStatus::Incomplete,
        _ => ItemStatus::Completed,
    };
    close_all(out, &mut open, status).await;
    let outcome = result.map(|()| {
        let mut approvals = HashSet::new();
        let calls = call_order
            .iter()
            .filter_map(|&i| match &out.response.output[i] {
                item @ (Item::FunctionCall(_)
                | Item::CustomToolCall(_)
                | Item::ShellCall(_)
                | Item::LocalShellCall(_)
                | Item::ApplyPatchCall(_)
                | Item::ComputerCall(_)) => crate::client_shapes::tool_call(item),
                Item::McpCall(c) => Some(ToolCall {
                    call_id: c.id.clone(),
                    name: mcp_tool_name(&c.server_label, &c.name),
                    arguments: c.arguments.clone(),
                }),
                item @ (Item::FileSearchCall(_)
                | Item::WebSearchCall(_)
                | Item::CodeInterpreterCall(_)) => Some(ToolCall {
                    call_id: item.id().unwrap_or_default().to_owned(),
                    name: HostedKind::of_item(item)?.function_name().to_owned(),
                    arguments: open.hosted_args.get(&i).cloned().unwrap_or_default(),
                }),
                Item::McpApprovalRequest(r) => {
                    approvals.insert(r.id.clone());
                    Some(ToolCall {
                        call_id: r.id.clone(),
                        name: mcp_tool_name(&r.server_label, &r.name),
                        arguments: r.arguments.clone(),
                    })
                }
                _ => None,
            })
            .collect();
        TurnOutcome {
            calls,
            approvals,
            finish,
            usage,
        }
    });
    (outcome, call_order)
}

/// Keeps the upstream's sealed reasoning on the open (or a new, empty)
/// reasoning item and closes it: the seal covers exactly what came before.
async fn reasoning_sealed(out: &mut Emitter<'_>, open: &mut Open, sealed: String) {
    let idx = open_reasoning(out, open).await;
    if let Item::Reasoning(r) = out.item_mut(idx) {
        r.encrypted_content = Some(sealed);
    }
    close_reasoning(out, open, ItemStatus::Completed).await;
}

async fn reasoning_delta(out: &mut Emitter<'_>, open: &mut Open, delta: String) {
    let idx = open_reasoning(out, open).await;
    open_reasoning_text(out, idx).await;
    if let Item::Reasoning(r) = out.item_mut(idx) {
        if let Some(ContentPart::ReasoningText(t)) = r.content.as_mut().and_then(|c| c.first_mut())
        {
            t.text.push_str(&delta);
        }
    }
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(EventData::ReasoningDelta {
            item_id,
            output_index: idx,
            content_index: 0,
            delta,
        })
        .await;
    }
}

/// The open reasoning item, opened (closing an open message) when none is;
/// its text part opens with the first text ([`open_reasoning_text`]).
pub(crate) async fn open_reasoning(out: &mut Emitter<'_>, open: &mut Open) -> usize {
    if let Some(i) = open.reasoning {
        return i;
    }
    if open.message.is_some() {
        close_message(out, open, ItemStatus::Completed).await;
    }
    let id = new_id(prefix::REASONING);
    let item = Item::Reasoning(Reasoning {
        id: Some(id),
        summary: Vec::new(),
        content: Some(Vec::new()),
        encrypted_content: None,
        status: Some(ItemStatus::InProgress),
    });
    let i = out.add_item(item).await;
    open.reasoning = Some(i);
    i
}

/// Opens the reasoning item's text part unless it is open already.
async fn open_reasoning_text(out: &mut Emitter<'_>, idx: usize) {
    if let Item::Reasoning(r) = out.item_mut(idx) {
        let content = r.content.get_or_insert_with(Vec::new);
        if !content.is_empty() {
            return;
        }
        content.push(reasoning_part(String::new()));
    }
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(EventData::ContentPartAdded {
            item_id,
            output_index: idx,
            content_index: 0,
            part: reasoning_part(String::new()),
        })
        .await;
    }
}

async fn text_delta(
    out: &mut Emitter<'_>,
    open: &mut Open,
    delta: String,
    kind: PartKind,
    logprobs: Vec<LogProb>,
) {
    if open.reasoning.is_some() {
        close_reasoning(out, open, ItemStatus::Completed).await;
    }
    if !open.calls.is_empty() {
        // Text after tool calls starts a new message after them.
        close_calls(out, open, ItemStatus::Completed).await;
    }
    let (idx, part) = match open.message {
        Some(m) => m,
        None => {
            let item = Item::Message(Message {
                id: Some(new_id(prefix::MESSAGE)),
                role: Role::Assistant,
                content: MessageContent::Parts(Vec::new()),
                status: Some(ItemStatus::InProgress),
                phase: None,
            });
            (out.add_item(item).await, None)
        }
    };
    let content_index = match part {
        Some((ci, k)) if k == kind => ci,
        other => {
            if let Some((ci, k)) = other {
                close_part(out, idx, ci, k).await;
            }
            let new_part = match kind {
                PartKind::Text => ContentPart::output_text(""),
                PartKind::Refusal => ContentPart::Refusal(RefusalPart {
                    refusal: String::new(),
                }),
            };
            let ci = match out.item_mut(idx) {
                Item::Message(Message {
                    content: MessageContent::Parts(parts),
                    ..
                }) => {
                    parts.push(new_part.clone());
                    parts.len() - 1
                }
                _ => 0,
            };
            if out.on() {
                let item_id = item_id(out, idx);
                out.emit(EventData::ContentPartAdded {
                    item_id,
                    output_index: idx,
                    content_index: ci,
                    part: new_part,
                })
                .await;
            }
            ci
        }
    };
    open.message = Some((idx, Some((content_index, kind))));
    if let Item::Message(Message {
        content: MessageContent::Parts(parts),
        ..
    }) = out.item_mut(idx)
    {
        match parts.get_mut(content_index) {
            Some(ContentPart::OutputText(t)) => {
                t.text.push_str(&delta);
                if !logprobs.is_empty() {
                    t.logprobs
                        .get_or_insert_with(Vec::new)
                        .extend(logprobs.iter().cloned());
                }
            }
            Some(ContentPart::Refusal(r)) => r.refusal.push_str(&delta),
            _ => {}
        }
    }
    if out.on() {
        let item_id = item_id(out, idx);
        let data = match kind {
            PartKind::Text => EventData::OutputTextDelta {
                item_id,
                output_index: idx,
                content_index,
                delta,
                logprobs,
            },
            PartKind::Refusal => EventData::RefusalDelta {
                item_id,
                output_index: idx,
                content_index,
                delta,
            },
        };
        out.emit(data).await;
    }
}

async fn close_all(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    close_reasoning(out, open, status).await;
    close_message(out, open, status).await;
    close_calls(out, open, status).await;
}

pub(crate) async fn close_reasoning(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    let Some(idx) = open.reasoning else {
        return;
    };
    summary::close_summary(out, &mut open.summary, idx).await;
    open.reasoning = None;
    let mut text = None;
    if let Item::Reasoning(r) = out.item_mut(idx) {
        r.status = Some(status);
        // A summary-only item (as OpenAI's models give) has no content.
        if r.content.as_ref().is_some_and(Vec::is_empty) {
            r.content = None;
        }
        text = r
            .content
            .as_ref()
            .map(|c| c.iter().filter_map(ContentPart::text).collect::<String>());
    }
    if let (true, Some(text)) = (out.on(), text) {
        let item_id = item_id(out, idx);
        out.emit(EventData::ReasoningDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index: 0,
            text: text.clone(),
        })
        .await;
        out.emit(EventData::ContentPartDone {
            item_id,
            output_index: idx,
            content_index: 0,
            part: reasoning_part(text),
        })
        .await;
    }
    out.item_done(idx).await;
}

pub(crate) async fn close_message(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    let Some((idx, part)) = open.message.take() else {
        return;
    };
    if let Some((ci, kind)) = part {
        close_part(out, idx, ci, kind).await;
    }
    if let Item::Message(m) = out.item_mut(idx) {
        m.status = Some(status);
    }
    out.item_done(idx).await;
}

async fn close_part(out: &mut Emitter<'_>, idx: usize, content_index: usize, kind: PartKind) {
    if kind == PartKind::Text {
        cite(out, idx, content_index).await;
    }
    if !out.on() {
        return;
    }
    let part = match out.item_mut(idx) {
        Item::Message(Message {
            content: MessageContent::Parts(parts),
            ..
        }) => parts.get(content_index).cloned(),
        _ => None,
    };
    let Some(part) = part else { return };
    let item_id = item_id(out, idx);
    let done = match (&part, kind) {
        (ContentPart::OutputText(t), PartKind::Text) => EventData::OutputTextDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index,
            text: t.text.clone(),
            logprobs: t.logprobs.clone().unwrap_or_default(),
        },
        (ContentPart::Refusal(r), _) => EventData::RefusalDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index,
            refusal: r.refusal.clone(),
        },
        _ => return,
    };
    out.emit(done).await;
    out.emit(EventData::ContentPartDone {
        item_id,
        output_index: idx,
        content_index,
        part,
    })
    .await;
}

/// Annotates an answer that cites earlier hosted results of the response
/// (`[file-…]` markers, result URLs): the annotations go on the stored part
/// and are announced before the part's `done` events.
async fn cite(out: &mut Emitter<'_>, idx: usize, content_index: usize) {
    let text = match out.item_mut(idx) {
        Item::Message(Message {
            content: MessageContent::Parts(parts),
            ..
        }) => match parts.get(content_index) {
            Some(ContentPart::OutputText(t)) => t.text.clone(),
            _ => return,
        },
        _ => return,
    };
    let found = windlass_protocol::hosted_render::answer_citations(
        &text,
        out.response.output[..idx].iter(),
    );
    if found.is_empty() {
        return;
    }
    let mut first = 0;
    if let Item::Message(Message {
        content: MessageContent::Parts(parts),
        ..
    }) = out.item_mut(idx)
    {
        if let Some(ContentPart::OutputText(t)) = parts.get_mut(content_index) {
            first = t.annotations.len();
            t.annotations.extend(found.iter().cloned());
        }
    }
    if out.on() {
        let item_id = item_id(out, idx);
        for (i, annotation) in found.into_iter().enumerate() {
            out.emit(EventData::OutputTextAnnotationAdded {
                item_id: item_id.clone(),
                output_index: idx,
                content_index,
                annotation_index: first + i,
                annotation,
            })
            .await;
        }
    }
}

fn reasoning_part(text: String) -> ContentPart {
    ContentPart::ReasoningText(TextPart { text })
}

pub(crate) fn item_id(out: &Emitter<'_>, idx: usize) -> String {
    out.response.output[idx].id().unwrap_or_default().to_owned()
}

//! Tool calls of a model turn: each opens as a function call, an `mcp_call`
//! or an `mcp_approval_request`, and closes before the next one starts.

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    EventData, FunctionCall, Item, ItemStatus, McpApprovalRequest, McpCall, McpCallStatus,
};

use tracing::warn;
use windlass_protocol::hosted_replay::HostedKind;

use super::{close_message, close_reasoning, item_id, Open};
use crate::client_shapes::typed::{self, TypedKind};
use crate::client_shapes::ClientShape;
use crate::emitter::Emitter;
use crate::hosted;
use crate::tooling::{CallKind, ToolSet};

pub(crate) async fn tool_delta(
    out: &mut Emitter<'_>,
    open: &mut Open,
    tools: &ToolSet,
    index: u32,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
) -> usize {
    if open.reasoning.is_some() {
        close_reasoning(out, open, ItemStatus::Completed).await;
    }
    if open.message.is_some() {
        close_message(out, open, ItemStatus::Completed).await;
    }
    let idx = match open.calls.get(&index) {
        Some(&i) => {
            if let (Some(n), Item::FunctionCall(c)) = (name, out.item_mut(i)) {
                if c.name.is_empty() {
                    c.name = n;
                }
            }
            i
        }
        None => {
            // One call at a time, as OpenAI streams them: the previous call is complete.
            close_calls(out, open, ItemStatus::Completed).await;
            let name = name.unwrap_or_default();
            let i = match tools.call_kind(&name) {
                CallKind::Shaped(ClientShape::Typed(kind)) => {
                    let call_id = id
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| new_id(prefix::CALL));
                    let i = out.reserve_item(typed::gathering_item(kind, call_id));
                    open.typed.insert(i, kind);
                    i
                }
                _ => {
                    let item = call_item(tools, id, name);
                    let hosted = HostedKind::of_item(&item).is_some();
                    let i = out.add_item(item).await;
                    if hosted {
                        open.hosted_args.insert(i, String::new());
                        if matches!(out.item_mut(i), Item::CodeInterpreterCall(_)) {
                            open.code.insert(i, Default::default());
                        }
                        hosted::calls::opened(out, i).await;
                    }
                    i
                }
            };
            open.calls.insert(index, i);
            i
        }
    };
    if let Some(args) = open.hosted_args.get_mut(&idx) {
        // A hosted call's arguments become its item's fields when it closes;
        // a code interpreter's code is shown as it arrives.
        args.push_str(&arguments);
        if let Some(code) = open.code.get_mut(&idx) {
            let delta = code.push(&arguments);
            hosted::calls::code_delta(out, idx, delta).await;
        }
        return idx;
    }
    if !arguments.is_empty() {
        let gathering = open.typed.contains_key(&idx);
        let delta = match out.item_mut(idx) {
            // A typed call is announced whole when it closes.
            Item::FunctionCall(c) if gathering => {
                c.arguments.push_str(&arguments);
                None
            }
            Item::FunctionCall(c) => {
                c.arguments.push_str(&arguments);
                Some(true)
            }
            Item::McpCall(c) => {
                c.arguments.push_str(&arguments);
                Some(false)
            }
            // A custom call's input is decoded from the arguments at close.
            Item::CustomToolCall(c) => {
                c.input.push_str(&arguments);
                None
            }
            // An approval request is announced whole when it closes.
            Item::McpApprovalRequest(r) => {
                r.arguments.push_str(&arguments);
                None
            }
            _ => None,
        };
        if let (Some(function), true) = (delta, out.on()) {
            let item_id = item_id(out, idx);
            let data = if function {
                EventData::FunctionCallArgumentsDelta {
                    item_id,
                    output_index: idx,
                    delta: arguments,
                }
            } else {
                EventData::McpCallArgumentsDelta {
                    item_id,
                    output_index: idx,
                    delta: arguments,
                }
            };
            out.emit(data).await;
        }
    }
    idx
}

/// The item a new call opens: a function call, or for a tool of an MCP
/// server an `mcp_call` (or an `mcp_approval_request` when it needs one).
fn call_item(tools: &ToolSet, call_id: Option<String>, name: String) -> Item {
    let call_id = || {
        call_id
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| new_id(prefix::CALL))
    };
    match tools.call_kind(&name) {
        CallKind::Function => Item::FunctionCall(FunctionCall {
            id: Some(new_id(prefix::FUNCTION_CALL)),
            call_id: call_id(),
            name,
            arguments: String::new(),
            namespace: None,
            status: Some(ItemStatus::InProgress),
        }),
        CallKind::Shaped(shape) => crate::client_shapes::call_item(&shape, call_id()),
        CallKind::Hosted(kind) => hosted::calls::open_item(kind),
        CallKind::Mcp { label, tool } => Item::McpCall(McpCall {
            id: new_id(prefix::MCP_CALL),
            server_label: label,
            name: tool,
            arguments: String::new(),
            output: None,
            error: None,
            status: Some(McpCallStatus::InProgress),
            approval_request_id: None,
        }),
        CallKind::McpApproval { label, tool } => Item::McpApprovalRequest(McpApprovalRequest {
            id: new_id(prefix::MCP_APPROVAL_REQUEST),
            server_label: label,
            name: tool,
            arguments: String::new(),
        }),
    }
}

/// Closes the calls of the turn. An `mcp_call` only finishes its arguments:
/// the item stays open until the call has run (or the loop stops).
pub(crate) async fn close_calls(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    let calls = std::mem::take(&mut open.calls);
    for (_, idx) in calls {
        if let Some(kind) = open.typed.remove(&idx) {
            close_typed(out, idx, kind, status).await;
            continue;
        }
        let item_id = item_id(out, idx);
        match out.item_mut(idx) {
            Item::FunctionCall(c) => {
                c.status = Some(status);
                let arguments = c.arguments.clone();
                out.emit(EventData::FunctionCallArgumentsDone {
                    item_id,
                    output_index: idx,
                    arguments,
                })
                .await;
                out.item_done(idx).await;
            }
            Item::CustomToolCall(c) => {
                c.status = Some(status);
                c.input = crate::client_shapes::custom_input(&c.input);
                let input = c.input.clone();
                out.emit(EventData::CustomToolCallInputDelta {
                    item_id: item_id.clone(),
                    output_index: idx,
                    delta: input.clone(),
                })
                .await;
                out.emit(EventData::CustomToolCallInputDone {
                    item_id,
                    output_index: idx,
                    input,
                })
                .await;
                out.item_done(idx).await;
            }
            Item::McpCall(c) => {
                let arguments = c.arguments.clone();
                out.emit(EventData::McpCallArgumentsDone {
                    item_id,
                    output_index: idx,
                    arguments,
                })
                .await;
            }
            // Open until the call has run, like an `mcp_call`.
            item if HostedKind::of_item(item).is_some() => {
                let arguments = open.hosted_args.get(&idx).cloned().unwrap_or_default();
                let streamed = open.code.remove(&idx);
                let streamed = streamed.as_ref().map_or("", |c| c.decoded());
                hosted::calls::arguments_done(out, idx, &arguments, streamed).await;
            }
            _ => out.item_done(idx).await,
        }
    }
}

/// Turns a gathered typed call into its item (`local_shell_call`, ...) and
/// announces it. Arguments that make no such item leave it a plain function
/// call named after the type, with the model's arguments as they are.
async fn close_typed(out: &mut Emitter<'_>, idx: usize, kind: TypedKind, status: ItemStatus) {
    if let Item::FunctionCall(c) = out.item_mut(idx) {
        match typed::typed_item(kind, c.call_id.clone(), &c.arguments, status) {
            Ok(item) => *out.item_mut(idx) = item,
            Err(why) => {
                warn!(tool = kind.type_name(), %why, "call returned as a function call");
                c.id = Some(new_id(prefix::FUNCTION_CALL));
                c.status = Some(status);
            }
        }
    }
    out.announce_done(idx).await;
}

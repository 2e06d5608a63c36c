//! `mcp_call` items while their calls run: `in_progress` when a call starts,
//! output or error and `completed`/`failed` when it ends.

use serde_json::json;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    EventData, Item, McpApprovalRequest, McpCall, McpCallError, McpCallStatus, McpToolCallError,
};

use crate::emitter::Emitter;
use crate::mcp::McpRun;
use crate::ports::agent::mcp::McpError;
use crate::ports::agent::tools::{ToolCall, ToolResult};

/// JSON-RPC-style codes for failures that happen around the tool rather
/// than in it (the port does not carry the server's own code).
pub(crate) fn protocol_code(e: &McpError) -> i64 {
    match e {
        McpError::Refused(_) => -32600,
        McpError::Unavailable(_) => -32000,
        McpError::Failed(_) => -32603,
        McpError::Timeout(_) => -32001,
        McpError::Cancelled => -32800,
    }
}

/// Finds the call's open `mcp_call` item, or adds one (a call resumed from
/// the parent, or released by an approval), and announces that it runs.
pub(crate) async fn start_call(
    out: &mut Emitter<'_>,
    mcp: &McpRun,
    call: &ToolCall,
    label: &str,
    tool: &str,
) -> usize {
    let existing = out
        .response
        .output
        .iter()
        .position(|it| matches!(it, Item::McpCall(c) if c.id == call.call_id));
    let idx = match existing {
        Some(i) if out.is_open(i) => i,
        _ => {
            let item = Item::McpCall(McpCall {
                id: call.call_id.clone(),
                server_label: label.to_owned(),
                name: tool.to_owned(),
                arguments: call.arguments.clone(),
                output: None,
                error: None,
                status: Some(McpCallStatus::InProgress),
                approval_request_id: mcp.approvals.get(&call.call_id).cloned(),
            });
            out.add_item(item).await
        }
    };
    out.emit(EventData::McpCallInProgress {
        item_id: call.call_id.clone(),
        output_index: idx,
    })
    .await;
    idx
}

/// Writes the result into the item and closes it. `protocol` is set when
/// the failure was the server's or the transport's, not the tool's.
pub(crate) async fn finish_call(
    out: &mut Emitter<'_>,
    idx: usize,
    result: ToolResult,
    protocol: Option<i64>,
) {
    let text = result.output.joined_text();
    let mut item_id = String::new();
    if let Item::McpCall(c) = out.item_mut(idx) {
        item_id = c.id.clone();
        if result.is_error {
            c.error = Some(McpCallError::Typed(match protocol {
                Some(code) => McpToolCallError::McpProtocolError {
                    code,
                    message: text,
                },
                None => McpToolCallError::McpToolExecutionError {
                    content: json!([{"type": "text", "text": text}]),
                },
            }));
            c.status = Some(McpCallStatus::Failed);
        } else {
            c.output = Some(text);
            c.status = Some(McpCallStatus::Completed);
        }
    }
    let event = if result.is_error {
        EventData::McpCallFailed {
            item_id,
            output_index: idx,
        }
    } else {
        EventData::McpCallCompleted {
            item_id,
            output_index: idx,
        }
    };
    out.emit(event).await;
    out.item_done(idx).await;
}

/// Turns the open `mcp_call` item of a call the policy wants approved into
/// an `mcp_approval_request` at the same output position, with the same
/// item id (stream clients track items by id), announced with
/// `output_item.done`; the continuation resumes it like any approval.
/// False when the call has no open item here.
pub(crate) async fn to_approval_request(out: &mut Emitter<'_>, call_id: &str) -> bool {
    let found = out
        .response
        .output
        .iter()
        .position(|it| matches!(it, Item::McpCall(c) if c.id == call_id));
    let Some(idx) = found.filter(|&i| out.is_open(i)) else {
        return false;
    };
    let Item::McpCall(c) = out.item_mut(idx).clone() else {
        return false;
    };
    *out.item_mut(idx) = Item::McpApprovalRequest(McpApprovalRequest {
        id: c.id,
        server_label: c.server_label,
        name: c.name,
        arguments: c.arguments,
    });
    out.item_done(idx).await;
    true
}

/// A paused `mcp_call` of the parent that the policy now wants approved:
/// the call is stored again, closed (`incomplete`, so no later continuation
/// resumes it), followed by an `mcp_approval_request` for the same call.
pub(crate) async fn reissue_as_approval(
    out: &mut Emitter<'_>,
    call: &ToolCall,
    label: &str,
    tool: &str,
) {
    let request_id = new_id(prefix::MCP_APPROVAL_REQUEST);
    out.add_done_item(Item::McpCall(McpCall {
        id: call.call_id.clone(),
        server_label: label.to_owned(),
        name: tool.to_owned(),
        arguments: call.arguments.clone(),
        output: None,
        error: Some(McpCallError::Text(format!(
            "not run: waiting for approval request {request_id}"
        ))),
        status: Some(McpCallStatus::Incomplete),
        approval_request_id: None,
    }))
    .await;
    out.add_done_item(Item::McpApprovalRequest(McpApprovalRequest {
        id: request_id,
        server_label: label.to_owned(),
        name: tool.to_owned(),
        arguments: call.arguments.clone(),
    }))
    .await;
}

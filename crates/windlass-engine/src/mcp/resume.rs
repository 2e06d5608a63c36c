//! What a continuation owes the MCP calls of its chain: calls paused in a
//! mixed turn run now, and each new `mcp_approval_response` runs (approve)
//! or refuses (deny) the call its request held.

use std::collections::{HashMap, HashSet};

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{Item, McpApprovalRequest, McpCallStatus};

use crate::error::EngineError;
use crate::naming::mcp_tool_name;
use crate::ports::agent::tools::ToolCall;

#[derive(Debug, Default)]
pub(crate) struct Resumed {
    /// Calls to settle before the next model turn, in transcript order.
    pub calls: Vec<ToolCall>,
    /// Call id -> the approval request it answers (approved or denied).
    pub approvals: HashMap<String, String>,
    /// Call id -> the denial fed to the model instead of running it.
    pub denied: HashMap<String, String>,
    /// Call id -> (server label, tool) of every call above.
    pub targets: HashMap<String, (String, String)>,
}

pub(crate) fn resume_mcp(history: &[Item], input: &[Item]) -> Result<Resumed, EngineError> {
    let mut resumed = Resumed::default();
    let mut requests: HashMap<&str, &McpApprovalRequest> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    // The latest version of each mcp_call decides whether it is still paused.
    let mut paused: Vec<&str> = Vec::new();
    let mut latest = HashMap::new();
    for item in history {
        match item {
            Item::McpApprovalRequest(r) => {
                requests.insert(&r.id, r);
            }
            Item::McpApprovalResponse(r) => {
                answered.insert(&r.approval_request_id);
            }
            Item::McpCall(c) => {
                if let Some(r) = &c.approval_request_id {
                    answered.insert(r);
                }
                if !latest.contains_key(c.id.as_str()) {
                    paused.push(&c.id);
                }
                latest.insert(c.id.as_str(), c);
            }
            _ => {}
        }
    }
    for id in paused {
        let c = latest[id];
        let open = c.output.is_none()
            && c.error.is_none()
            && matches!(
                c.status,
                Some(McpCallStatus::InProgress | McpCallStatus::Calling)
            );
        if open {
            resumed
                .targets
                .insert(c.id.clone(), (c.server_label.clone(), c.name.clone()));
            resumed.calls.push(ToolCall {
                call_id: c.id.clone(),
                name: mcp_tool_name(&c.server_label, &c.name),
                arguments: c.arguments.clone(),
            });
        }
    }
    for (i, item) in input.iter().enumerate() {
        let Item::McpApprovalResponse(r) = item else {
            continue;
        };
        let param = format!("input[{i}].approval_request_id");
        let Some(req) = requests.get(r.approval_request_id.as_str()) else {
            return Err(EngineError::invalid_code(
                format!(
                    "No MCP approval request found with id '{}'.",
                    r.approval_request_id
                ),
                Some(&param),
                "unknown_approval_request",
            ));
        };
        if !answered.insert(&r.approval_request_id) {
            return Err(EngineError::invalid_code(
                format!(
                    "MCP approval request '{}' was already answered.",
                    r.approval_request_id
                ),
                Some(&param),
                "approval_already_answered",
            ));
        }
        let call_id = new_id(prefix::MCP_CALL);
        if !r.approve {
            let why = r
                .reason
                .as_deref()
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            resumed.denied.insert(
                call_id.clone(),
                format!("The user denied this tool call{why}"),
            );
        }
        resumed.approvals.insert(call_id.clone(), req.id.clone());
        resumed.targets.insert(
            call_id.clone(),
            (req.server_label.clone(), req.name.clone()),
        );
        resumed.calls.push(ToolCall {
            call_id,
            name: mcp_tool_name(&req.server_label, &req.name),
            arguments: req.arguments.clone(),
        });
    }
    Ok(resumed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn items(v: serde_json::Value) -> Vec<Item> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn approvals_resume_once() {
        let history = items(json!([
            {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "calc",
             "name": "add", "arguments": "{\"a\":1}"},
        ]));
        let input = items(json!([
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true}
        ]));
        let r = resume_mcp(&history, &input).unwrap();
        assert_eq!(r.calls.len(), 1);
        assert_eq!(r.calls[0].name, "calc__add");
        assert_eq!(r.approvals[&r.calls[0].call_id], "mcpr_1");
        assert!(r.denied.is_empty());

        let twice = items(json!([
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true},
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": false}
        ]));
        assert!(resume_mcp(&history, &twice).is_err());
        let unknown = items(json!([
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_x", "approve": true}
        ]));
        assert!(resume_mcp(&history, &unknown).is_err());
    }

    #[test]
    fn paused_calls_resume_until_finished() {
        let paused = json!({"type": "mcp_call", "id": "mcp_1", "server_label": "calc",
            "name": "add", "arguments": "{}", "status": "in_progress"});
        let r = resume_mcp(&items(json!([paused.clone()])), &[]).unwrap();
        assert_eq!(r.calls.len(), 1);
        let done = json!({"type": "mcp_call", "id": "mcp_1", "server_label": "calc",
            "name": "add", "arguments": "{}", "status": "completed", "output": "3"});
        let r = resume_mcp(&items(json!([paused, done])), &[]).unwrap();
        assert!(r.calls.is_empty());
    }
}

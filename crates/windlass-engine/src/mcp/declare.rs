//! The request's `{"type": "mcp"}` tools: checked, secrets split off, and
//! the tool lists an earlier response of the chain already holds reused.

use std::collections::HashSet;

use serde_json::{json, Value};
use windlass_protocol::{
    Item, McpAllowedTools, McpApprovalMode, McpRequireApproval, McpTool, McpToolFilter, McpToolInfo,
};

use crate::error::EngineError;
use crate::naming::mcp_tool_name;
use crate::ports::agent::mcp::{McpError, McpHub, McpServerRef};
use crate::ports::agent::tools::{ToolDefinition, ToolOrigin};
use crate::tooling::ToolSet;

/// One MCP server a request uses.
#[derive(Debug, Clone)]
pub(crate) struct McpServerDecl {
    /// Position in the request's `tools`, for error params.
    pub index: usize,
    pub server: McpServerRef,
    pub allowed: Option<McpToolFilter>,
    /// `None`: the server's configured default, else OpenAI's default (always).
    pub approval: Option<McpRequireApproval>,
    /// Its tools as listed earlier in the chain: reused, never re-listed.
    pub listed: Option<Vec<McpToolInfo>>,
}

pub(crate) fn declare(
    tool: &McpTool,
    index: usize,
    labels: &mut HashSet<String>,
) -> Result<McpServerDecl, EngineError> {
    let param = |field: &str| Some(format!("tools[{index}].{field}"));
    let label = &tool.server_label;
    if label.is_empty()
        || label.len() > 32
        || !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(EngineError::invalid(
            format!(
                "Invalid server_label '{label}': use letters, digits, '_' or '-', at most 32 characters."
            ),
            param("server_label"),
        ));
    }
    if !labels.insert(label.clone()) {
        return Err(EngineError::invalid(
            format!("Duplicate MCP server_label '{label}'."),
            param("server_label"),
        ));
    }
    if tool.connector_id.is_some() {
        return Err(EngineError::invalid_code(
            "connector_id is not supported by this gateway; give server_url instead",
            param("connector_id").as_deref(),
            "unsupported_parameter",
        ));
    }
    let mut headers = Vec::new();
    for (name, value) in tool.headers.iter().flatten() {
        let Value::String(v) = value else {
            return Err(EngineError::invalid(
                format!("Header '{name}' must be a string."),
                param("headers"),
            ));
        };
        headers.push((name.clone(), v.clone()));
    }
    if let Some(token) = &tool.authorization {
        if headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            return Err(EngineError::invalid(
                "Give the token either as `authorization` or as an Authorization header, not both.",
                param("authorization"),
            ));
        }
        headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
    }
    let allowed = tool.allowed_tools.as_ref().map(|a| match a {
        McpAllowedTools::Names(names) => McpToolFilter {
            tool_names: Some(names.clone()),
            read_only: None,
        },
        McpAllowedTools::Filter(f) => f.clone(),
    });
    Ok(McpServerDecl {
        index,
        server: McpServerRef {
            label: label.clone(),
            url: tool.server_url.clone(),
            headers,
        },
        allowed,
        approval: tool.require_approval.clone(),
        listed: None,
    })
}

/// Asks the hub whether each server may be used; a refusal is a 400.
pub(crate) async fn check_servers(
    hub: &dyn McpHub,
    decls: &[McpServerDecl],
) -> Result<(), EngineError> {
    for d in decls {
        if let Err(e) = hub.check(&d.server).await {
            let field = if d.server.url.is_some() {
                "server_url"
            } else {
                "server_label"
            };
            let code = match e {
                McpError::Refused(_) => "mcp_server_refused",
                _ => "mcp_server_unavailable",
            };
            return Err(EngineError::invalid_code(
                format!("MCP server '{}': {e}", d.server.label),
                Some(&format!("tools[{}].{field}", d.index)),
                code,
            ));
        }
    }
    Ok(())
}

/// Finds, for each server, the tool list the chain already holds (the
/// latest successful `mcp_list_tools` with its label).
pub(crate) fn reuse_listings<'a>(
    decls: &mut [McpServerDecl],
    earlier: impl Iterator<Item = &'a Item>,
) {
    for item in earlier {
        if let Item::McpListTools(l) = item {
            if l.error.is_some() {
                continue;
            }
            if let Some(d) = decls.iter_mut().find(|d| d.server.label == l.server_label) {
                d.listed = Some(l.tools.clone());
            }
        }
    }
}

/// Makes a server's tools visible to the model, as far as the request's
/// `allowed_tools` lets them.
pub(crate) fn add_tools(
    set: &mut ToolSet,
    decl: &McpServerDecl,
    default_approval: Option<&McpRequireApproval>,
    tools: &[McpToolInfo],
) {
    let approval = decl.approval.as_ref().or(default_approval);
    for tool in tools {
        if !decl.allowed.as_ref().is_none_or(|f| matches(f, tool)) {
            continue;
        }
        let mut parameters = tool.input_schema.clone();
        if !parameters.is_object() {
            parameters = json!({"type": "object", "properties": {}});
        }
        let def = ToolDefinition {
            name: mcp_tool_name(&decl.server.label, &tool.name),
            description: tool.description.clone(),
            parameters,
            strict: None,
            origin: ToolOrigin::Mcp {
                server_label: decl.server.label.clone(),
                name: tool.name.clone(),
            },
        };
        if !set.add_mcp(def, needs_approval(approval, tool)) {
            tracing::warn!(
                server = %decl.server.label,
                tool = %tool.name,
                "MCP tool hidden: its model-visible name collides with another tool"
            );
        }
    }
}

/// OpenAI's rule: approval is required unless `never` says otherwise; with
/// filters, a tool `always` names needs it, one `never` names does not, and
/// any other tool needs it.
fn needs_approval(rule: Option<&McpRequireApproval>, tool: &McpToolInfo) -> bool {
    match rule {
        None | Some(McpRequireApproval::Mode(McpApprovalMode::Always)) => true,
        Some(McpRequireApproval::Mode(McpApprovalMode::Never)) => false,
        Some(McpRequireApproval::Filter(f)) => {
            if f.always.as_ref().is_some_and(|a| matches(a, tool)) {
                true
            } else {
                !f.never.as_ref().is_some_and(|n| matches(n, tool))
            }
        }
    }
}

/// A filter matches when every criterion it gives holds.
fn matches(filter: &McpToolFilter, tool: &McpToolInfo) -> bool {
    let named = filter
        .tool_names
        .as_ref()
        .is_none_or(|names| names.iter().any(|n| n == &tool.name));
    let read_only = filter.read_only.is_none_or(|want| {
        let hint = tool
            .annotations
            .as_ref()
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        hint == want
    });
    named && read_only
}

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_protocol::McpApprovalFilter;

    fn tool(name: &str, read_only: bool) -> McpToolInfo {
        McpToolInfo {
            name: name.to_owned(),
            description: None,
            input_schema: json!({"type": "object"}),
            annotations: Some(json!({"readOnlyHint": read_only})),
        }
    }

    fn names(list: &[&str]) -> McpToolFilter {
        McpToolFilter {
            tool_names: Some(list.iter().map(|s| s.to_string()).collect()),
            read_only: None,
        }
    }

    #[test]
    fn approval_defaults_to_always() {
        assert!(needs_approval(None, &tool("add", false)));
        let never = McpRequireApproval::Mode(McpApprovalMode::Never);
        assert!(!needs_approval(Some(&never), &tool("add", false)));
    }

    #[test]
    fn approval_filters() {
        let rule = McpRequireApproval::Filter(McpApprovalFilter {
            always: Some(names(&["delete"])),
            never: Some(names(&["add", "delete"])),
        });
        assert!(needs_approval(Some(&rule), &tool("delete", false)));
        assert!(!needs_approval(Some(&rule), &tool("add", false)));
        assert!(needs_approval(Some(&rule), &tool("other", false)));
        let read_only = McpRequireApproval::Filter(McpApprovalFilter {
            always: None,
            never: Some(McpToolFilter {
                tool_names: None,
                read_only: Some(true),
            }),
        });
        assert!(!needs_approval(Some(&read_only), &tool("get", true)));
        assert!(needs_approval(Some(&read_only), &tool("put", false)));
    }

    #[test]
    fn authorization_becomes_a_bearer_header() {
        let t: McpTool = serde_json::from_value(json!({
            "type": "mcp", "server_label": "calc", "server_url": "https://x/mcp",
            "authorization": "tok", "headers": {"X-A": "1"}
        }))
        .unwrap();
        let d = declare(&t, 0, &mut HashSet::new()).unwrap();
        assert_eq!(d.server.headers.len(), 2);
        assert!(d
            .server
            .headers
            .contains(&("Authorization".to_owned(), "Bearer tok".to_owned())));
        assert!(!format!("{:?}", d.server).contains("tok"));
    }

    #[test]
    fn bad_declarations_are_refused() {
        let mut labels = HashSet::new();
        let bad_label: McpTool =
            serde_json::from_value(json!({"type": "mcp", "server_label": "a b"})).unwrap();
        assert!(declare(&bad_label, 0, &mut labels).is_err());
        let ok: McpTool =
            serde_json::from_value(json!({"type": "mcp", "server_label": "a"})).unwrap();
        declare(&ok, 0, &mut labels).unwrap();
        assert!(declare(&ok, 1, &mut labels).is_err(), "duplicate label");
        let header: McpTool = serde_json::from_value(
            json!({"type": "mcp", "server_label": "h", "headers": {"X": 1}}),
        )
        .unwrap();
        assert!(declare(&header, 2, &mut labels).is_err());
    }
}

//! `mcp_toolset` entries of `tools` (Anthropic's MCP connector since the
//! `mcp-client-2025-11-20` beta): which tools of an `mcp_servers` entry the
//! model sees. A toolset naming a server the request did not declare is
//! the operator's configured server of that label.

use serde_json::Value;
use windlass_protocol::anthropic::ToolDefinition;
use windlass_protocol::{McpAllowedTools, McpTool, Tool};

use super::blocks::invalid;
use crate::error::ApiError;

pub(crate) const TOOLSET: &str = "mcp_toolset";

/// Applies each toolset to the `mcp` tool of its server (added when the
/// request did not declare it).
pub(crate) fn apply(
    toolsets: Vec<(usize, ToolDefinition)>,
    mcp: &mut Vec<Tool>,
) -> Result<(), ApiError> {
    for (i, set) in toolsets {
        let path = format!("tools.{i}");
        let Some(name) = set.settings.get("mcp_server_name").and_then(Value::as_str) else {
            return Err(invalid(
                &format!("{path}.mcp_server_name"),
                "Field required",
            ));
        };
        let allowed = allowed_tools(&path, &set)?;
        let at = mcp
            .iter()
            .position(|t| matches!(t, Tool::Mcp(m) if m.server_label == name));
        let at = match at {
            Some(at) => at,
            None => {
                mcp.push(operator_server(name));
                mcp.len() - 1
            }
        };
        if let (Tool::Mcp(m), Some(allowed)) = (&mut mcp[at], allowed) {
            m.allowed_tools = Some(McpAllowedTools::Names(allowed));
        }
    }
    Ok(())
}

/// `None`: every tool. `default_config.enabled: false` with per-tool
/// `configs` enabling some: those. Disabling single tools of an enabled
/// server would need the server's list, which prepare does not have: refused.
fn allowed_tools(path: &str, set: &ToolDefinition) -> Result<Option<Vec<String>>, ApiError> {
    let enabled = |v: &Value| v.get("enabled").and_then(Value::as_bool);
    let default = set.settings.get("default_config").and_then(enabled);
    let configs = set.settings.get("configs").and_then(Value::as_object);
    let pick = |want: bool| -> Vec<String> {
        configs
            .into_iter()
            .flatten()
            .filter(|(_, c)| enabled(c).unwrap_or(default.unwrap_or(true)) == want)
            .map(|(name, _)| name.clone())
            .collect()
    };
    if default == Some(false) {
        return Ok(Some(pick(true)));
    }
    if !pick(false).is_empty() {
        return Err(invalid(
            &format!("{path}.configs"),
            "disabling single tools of an enabled MCP server is not supported here; set \
             `default_config.enabled: false` and enable the tools wanted in `configs`",
        ));
    }
    Ok(None)
}

/// A configured server by label, under the operator's approval default.
pub(crate) fn operator_server(label: &str) -> Tool {
    Tool::Mcp(McpTool {
        server_label: label.to_owned(),
        server_url: None,
        connector_id: None,
        server_description: None,
        headers: None,
        authorization: None,
        allowed_tools: None,
        require_approval: None,
    })
}

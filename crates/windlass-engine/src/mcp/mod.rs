//! MCP in the loop: declared servers, their `mcp_list_tools` items (once per
//! label per chain), `mcp_call` items and approvals. The protocol itself is
//! behind the [`McpHub`](crate::ports::agent::mcp::McpHub) port.

pub(crate) mod calls;
pub(crate) mod declare;
pub(crate) mod listing;
pub(crate) mod resume;

use std::collections::HashMap;

use crate::ports::agent::mcp::McpServerRef;
use declare::McpServerDecl;

/// The MCP side of one response.
#[derive(Debug, Default)]
pub(crate) struct McpRun {
    pub servers: Vec<McpServerDecl>,
    /// Call id -> the approval request it answers.
    pub approvals: HashMap<String, String>,
    /// Call id -> why it is not run (the user denied it).
    pub denied: HashMap<String, String>,
    /// Call id -> (server label, tool) of calls resumed from the chain.
    pub targets: HashMap<String, (String, String)>,
}

impl McpRun {
    pub(crate) fn server(&self, label: &str) -> Option<&McpServerRef> {
        self.servers
            .iter()
            .map(|d| &d.server)
            .find(|s| s.label == label)
    }
}

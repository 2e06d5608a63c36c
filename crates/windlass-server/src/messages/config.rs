//! `[server.messages]`: the Messages surface's settings.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MessagesConfig {
    /// Store Messages responses (and their execution traces) like
    /// `/v1/responses` does. Off by default: the Messages API is stateless.
    pub store: bool,
    /// Labels of configured MCP servers (or `windlass` for the built-ins)
    /// attached to every `/v1/messages` request, for clients that cannot
    /// name them (Claude Code). Their calls run inside the request.
    pub mcp_servers: Vec<String>,
}

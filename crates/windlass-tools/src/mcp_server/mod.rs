//! One governed MCP server for other agents: the operator's configured MCP
//! servers and the built-in tools served together (tools named by label,
//! `label__tool`, as the engine names them), over streamable HTTP, to any
//! MCP client (Claude Code, Cursor, Codex, the Agents SDK).
//!
//! Each request carries its caller ([`McpCaller`]: key name, tenant,
//! scopes), put in the HTTP request's extensions by the gateway's key
//! guard; every call goes through an [`McpGate`] (governance before,
//! metrics/logs/trace after). Upstream MCP credentials stay in the hub: a
//! client sees tools, never the servers' URLs or headers.

mod gate;
mod handler;
mod http;
mod policy_gate;

pub use gate::{CallOutcome, GateVerdict, GatewayCall, McpCaller, McpGate};
pub use handler::GatewayMcpServer;
pub use http::{mcp_http_service, McpEndpointOptions, McpHttpService};
pub use policy_gate::PolicyGate;

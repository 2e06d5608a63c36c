//! `GET /v1/mcp/servers`: the operator's view of configured MCP servers.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::AppState;

/// Where the server view comes from; the binary plugs its MCP adapter in.
/// The entries are wire JSON: label, transport, state, last error, tools;
/// never headers or tokens.
pub trait McpDirectory: Send + Sync {
    fn servers(&self) -> Vec<Value>;
}

pub(crate) async fn list_servers(State(state): State<AppState>) -> Json<Value> {
    let data = state.mcp.as_ref().map(|d| d.servers()).unwrap_or_default();
    Json(json!({"object": "list", "data": data}))
}

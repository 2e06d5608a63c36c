//! `GET /v1/mcp/servers`: the operator's view of configured MCP servers.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::state::AppState;

pub(crate) async fn list_servers(State(state): State<AppState>) -> Json<Value> {
    let data = state.mcp.as_ref().map(|d| d.servers()).unwrap_or_default();
    Json(json!({"object": "list", "data": data}))
}

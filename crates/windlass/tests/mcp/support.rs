//! The MCP tests' own helpers: a gateway wired to the real MCP adapter
//! (`windlass_tools::McpServers`) through a recording hub, the operator view
//! `GET /v1/mcp/servers` is built from, request tool builders and SSE traces
//! of the MCP items. Here rather than in the testkit, which does not depend
//! on windlass-tools (whose own tests use the testkit).

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    ClientToolsStatus, EngineConfig, McpError, McpHub, McpServerRef, ToolResult,
};
use windlass_protocol::{McpRequireApproval, McpToolInfo};
use windlass_server::McpDirectory;
pub(crate) use windlass_testkit::check::only;
use windlass_testkit::{Gateway, GatewayOptions, SseCapture};
use windlass_tools::{McpConfig, McpServerConfig, McpServers, ServerState};

/// Every tool of `tests/mcp/fixture_server.py`.
pub(crate) const FIXTURE_TOOLS: [&str; 7] =
    ["add", "echo", "slow", "crash", "fail", "multi", "weather"];

/// What the engine asked of the MCP adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HubOp {
    List {
        label: String,
    },
    Call {
        label: String,
        tool: String,
        arguments: String,
    },
}

/// An [`McpHub`] that forwards to the real adapter and records every list
/// and call, so tests can tell whether the server was contacted.
pub(crate) struct RecordingHub {
    pub inner: Arc<McpServers>,
    ops: Mutex<Vec<HubOp>>,
}

impl RecordingHub {
    pub(crate) fn ops(&self) -> Vec<HubOp> {
        self.ops.lock().unwrap().clone()
    }

    pub(crate) fn lists(&self) -> Vec<String> {
        self.ops()
            .into_iter()
            .filter_map(|o| match o {
                HubOp::List { label } => Some(label),
                _ => None,
            })
            .collect()
    }

    /// `(label, tool, arguments)` of every call.
    pub(crate) fn calls(&self) -> Vec<(String, String, String)> {
        self.ops()
            .into_iter()
            .filter_map(|o| match o {
                HubOp::Call {
                    label,
                    tool,
                    arguments,
                } => Some((label, tool, arguments)),
                _ => None,
            })
            .collect()
    }

    /// Waits until `n` calls started; panics after `timeout`.
    pub(crate) async fn wait_calls(&self, n: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.calls().len() < n {
            assert!(Instant::now() < deadline, "{n} MCP calls never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[async_trait::async_trait]
impl McpHub for RecordingHub {
    async fn check(&self, server: &McpServerRef) -> Result<(), McpError> {
        self.inner.check(server).await
    }

    async fn list_tools(
        &self,
        server: &McpServerRef,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        self.ops.lock().unwrap().push(HubOp::List {
            label: server.label.clone(),
        });
        self.inner.list_tools(server, cancel).await
    }

    async fn call_tool(
        &self,
        server: &McpServerRef,
        tool: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError> {
        self.ops.lock().unwrap().push(HubOp::Call {
            label: server.label.clone(),
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
        });
        self.inner.call_tool(server, tool, arguments, cancel).await
    }

    fn default_approval(&self, label: &str) -> Option<McpRequireApproval> {
        McpHub::default_approval(&*self.inner, label)
    }
}

/// `GET /v1/mcp/servers` over the adapter, as the binary's `McpView` does.
pub(crate) struct View(pub Arc<McpServers>);

impl McpDirectory for View {
    fn servers(&self) -> Vec<Value> {
        self.0
            .status()
            .iter()
            .filter_map(|s| serde_json::to_value(s).ok())
            .collect()
    }
}

/// A gateway with MCP enabled.
pub(crate) struct McpGw {
    pub gw: Gateway,
    pub hub: Arc<RecordingHub>,
}

impl std::ops::Deref for McpGw {
    type Target = Gateway;
    fn deref(&self) -> &Gateway {
        &self.gw
    }
}

/// `allow_hosts = ["127.0.0.1"]` (fixtures listen on loopback), 20 s calls.
pub(crate) fn loopback_config() -> McpConfig {
    McpConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        call_timeout_secs: 20,
        ..Default::default()
    }
}

/// A configured server entry reached over streamable HTTP.
pub(crate) fn http_server(label: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        label: label.into(),
        url: Some(url.into()),
        ..Default::default()
    }
}

/// A gateway in the opt-in `requires_action` mode, which these tests were
/// written for (a pause is then visible in the status and the terminal event).
pub(crate) async fn start(config: McpConfig) -> McpGw {
    let engine = EngineConfig {
        client_tools_status: ClientToolsStatus::RequiresAction,
        ..EngineConfig::default()
    };
    start_with(config, engine).await
}

pub(crate) async fn start_with(config: McpConfig, engine: EngineConfig) -> McpGw {
    start_with_policy(config, engine, None).await
}

/// Like [`start_with`], with an engine policy.
pub(crate) async fn start_with_policy(
    config: McpConfig,
    engine: EngineConfig,
    policy: Option<Arc<dyn windlass_engine::Policy>>,
) -> McpGw {
    let servers = McpServers::start(config);
    let hub = Arc::new(RecordingHub {
        inner: servers.clone(),
        ops: Mutex::new(Vec::new()),
    });
    let gw = Gateway::start_with(GatewayOptions {
        engine,
        policy,
        mcp: Some(hub.clone()),
        mcp_directory: Some(Arc::new(View(servers))),
        ..Default::default()
    })
    .await;
    McpGw { gw, hub }
}

/// Waits until the configured server `label` is in `state`; returns its status.
pub(crate) async fn wait_state(hub: &McpServers, label: &str, state: ServerState) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = hub.status();
        let s = status
            .iter()
            .find(|s| s.label == label)
            .unwrap_or_else(|| panic!("no configured server {label}"));
        if s.state == state {
            return serde_json::to_value(s).unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "server {label} never reached {state:?}: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A request-declared server that needs no approval.
pub(crate) fn mcp_tool(label: &str, url: &str) -> Value {
    json!({"type": "mcp", "server_label": label, "server_url": url, "require_approval": "never"})
}

/// A request-declared server with the default approval rule (always).
pub(crate) fn mcp_tool_default(label: &str, url: &str) -> Value {
    json!({"type": "mcp", "server_label": label, "server_url": url})
}

/// A loopback URL nothing listens on.
pub(crate) fn dead_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/mcp")
}

/// The tool names of an `mcp_list_tools` item.
pub(crate) fn listed_names(item: &Value) -> Vec<String> {
    item["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {item}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The events of the stream that concern MCP items, in order: item
/// added/done as `added:<type>` / `done:<type>`, the `response.mcp_*`
/// events, consecutive argument deltas folded into one entry.
pub(crate) fn mcp_trace(cap: &SseCapture) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (name, d) in &cap.events {
        let entry = match name.as_str() {
            "response.output_item.added" | "response.output_item.done" => {
                let kind = d["item"]["type"].as_str().unwrap_or("?");
                if !kind.starts_with("mcp_") {
                    continue;
                }
                let verb = if name.ends_with("added") {
                    "added"
                } else {
                    "done"
                };
                format!("{verb}:{kind}")
            }
            n if n.starts_with("response.mcp_") => n.trim_start_matches("response.").to_owned(),
            _ => continue,
        };
        if entry.ends_with(".delta") && out.last() == Some(&entry) {
            continue;
        }
        out.push(entry);
    }
    out
}

/// The events of the one `mcp_call` item `item_id`: every `mcp_call*`
/// event names it, and its argument deltas add up to the done arguments.
pub(crate) fn check_mcp_call_events(cap: &SseCapture, item_id: &str) {
    let mut deltas = String::new();
    let mut done_args = None;
    for (name, d) in &cap.events {
        if !name.starts_with("response.mcp_call") {
            continue;
        }
        if d["item_id"] != item_id {
            continue;
        }
        match name.as_str() {
            "response.mcp_call_arguments.delta" => deltas.push_str(d["delta"].as_str().unwrap()),
            "response.mcp_call_arguments.done" => {
                done_args = Some(d["arguments"].as_str().unwrap().to_owned())
            }
            _ => {}
        }
    }
    if let Some(done) = done_args {
        assert_eq!(deltas, done, "mcp_call argument deltas != done arguments");
    }
}

//! The governed MCP endpoint (`mcp_server`) served over streamable HTTP on
//! loopback, driven by the official MCP Python client
//! (`tests/mcp/endpoint_client.py`, mcp 2.x from `.venv-test`): a real MCP
//! server (the Python fixture, configured with a bearer token) and the
//! built-in file tools served as one server, tools named by label, each
//! request's caller taken from a key guard, every call through the real
//! governance gate (scopes, a per-tool rate limit). Needs
//! `./scripts/mcp-fixtures.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[allow(dead_code, unused_imports)]
mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use common::{McpFixture, PyMcp};
use serde_json::{json, Value};
use windlass_engine::McpHub;
use windlass_governance::{Governance, GovernanceConfig};
use windlass_tools::builtins::{Builtins, BuiltinsConfig, WithBuiltins, BUILTIN_LABEL};
use windlass_tools::mcp_server::{
    mcp_http_service, CallOutcome, GateVerdict, GatewayCall, GatewayMcpServer, McpCaller,
    McpEndpointOptions, McpGate, PolicyGate,
};
use windlass_tools::{McpConfig, McpServerConfig, McpServers};

const UPSTREAM_SECRET: &str = "upstream-secret-token";

/// The governance gate, recording what went through it.
struct Recorded {
    inner: PolicyGate,
    seen: Mutex<Vec<(String, String, String)>>,
}

#[async_trait::async_trait]
impl McpGate for Recorded {
    async fn before_call(&self, call: &GatewayCall<'_>) -> GateVerdict {
        self.inner.before_call(call).await
    }

    async fn after_call(&self, call: &GatewayCall<'_>, outcome: &CallOutcome) {
        let outcome = match outcome {
            CallOutcome::Ran { is_error: false } => "ran",
            CallOutcome::Ran { is_error: true } => "ran_error",
            CallOutcome::Denied => "denied",
            CallOutcome::Failed { .. } => "failed",
        };
        self.seen.lock().unwrap().push((
            call.caller.key_name.clone(),
            call.tool.to_owned(),
            outcome.to_owned(),
        ));
    }
}

/// Stands in for the gateway's key guard: a known bearer key becomes the
/// request's caller; anything else is a 401 before MCP is reached.
async fn key_guard(mut request: Request, next: Next) -> Result<Response, StatusCode> {
    let token = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let caller = match token {
        "alice-key" => ("alice", "acme"),
        "reader-key" => ("reader", "acme"),
        _ => return Err(StatusCode::UNAUTHORIZED),
    };
    request.extensions_mut().insert(McpCaller {
        key_name: caller.0.into(),
        tenant: caller.1.into(),
        scopes: vec!["mcp".into()],
    });
    Ok(next.run(request).await)
}

struct Endpoint {
    url: String,
    gate: Arc<Recorded>,
    _fixture: McpFixture,
    work: PathBuf,
}

async fn start() -> Endpoint {
    let fixture = McpFixture::python(PyMcp::V2).await;
    let mut fx = McpServerConfig {
        label: "fx".into(),
        url: Some(fixture.url.clone()),
        ..McpServerConfig::default()
    };
    fx.bearer_token = Some(UPSTREAM_SECRET.into());
    let servers = McpServers::try_start(McpConfig {
        call_timeout_secs: 20,
        servers: vec![fx],
        ..McpConfig::default()
    })
    .expect("config");

    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let work = std::env::temp_dir().join(format!(
        "windlass-mcp-endpoint-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let mut builtins: BuiltinsConfig = toml::from_str("").unwrap();
    builtins.enabled = vec!["read_file".into(), "write_file".into()];
    builtins.work_dir = Some(work.clone());
    let builtins = Arc::new(Builtins::start(builtins).await.expect("builtins"));
    let (work_dir, roots) = builtins.workspace();
    let hub: Arc<dyn McpHub> = Arc::new(WithBuiltins::new(
        builtins,
        Some(servers.clone() as Arc<dyn McpHub>),
    ));

    let governance: GovernanceConfig = toml::from_str(
        r#"
        tool_rate_limit = { per_minute = 1, burst = 2 }
        [keys.reader]
        tools = ["fx/add"]
        "#,
    )
    .unwrap();
    let policy = Governance::new(governance)
        .unwrap()
        .with_workspace(work_dir, roots);
    let gate = Arc::new(Recorded {
        inner: PolicyGate::new(Arc::new(policy)),
        seen: Mutex::new(Vec::new()),
    });
    let server = GatewayMcpServer::new(hub, vec![BUILTIN_LABEL.into(), "fx".into()], gate.clone());
    let service = mcp_http_service(server, McpEndpointOptions::default());
    let app = Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn(key_guard));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Endpoint {
        url: format!("http://{addr}/mcp"),
        gate,
        _fixture: fixture,
        work,
    }
}

fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = std::env::var("WINDLASS_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".venv-test/bin/python"));
    assert!(
        venv.exists(),
        "MCP fixtures missing: run ./scripts/mcp-fixtures.sh"
    );
    venv
}

/// Runs the Python client; its JSON report.
async fn client(url: &str, token: &str, mode: &str, calls: Value) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/endpoint_client.py");
    let out = tokio::process::Command::new(python())
        .arg(script)
        .args([url, token, mode, &calls.to_string()])
        .output()
        .await
        .expect("run the python client");
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client JSON")
}

fn call(report: &Value, k: usize) -> &Value {
    &report["calls"][k]
}

async fn serves_one_governed_server(mode: &str) {
    let endpoint = start().await;
    let calls = json!([
        ["fx__add", {"a": 2, "b": 3}],
        ["windlass__write_file", {"path": "note.txt", "content": "from an agent"}],
        ["windlass__read_file", {"path": "note.txt"}],
        ["fx__add", {"a": 1, "b": 1}],
        // The third fx__add in a minute: the per-tool limit of 2.
        ["fx__add", {"a": 1, "b": 1}],
        ["fx__nope", {}],
    ]);
    let report = client(&endpoint.url, "alice-key", mode, calls).await;
    eprintln!("{mode}: protocol {}", report["protocol"]);

    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for expected in [
        "fx__add",
        "fx__echo",
        "windlass__read_file",
        "windlass__write_file",
    ] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    // The upstream's address and credentials stay in the gateway.
    let listed = report["listed"].to_string();
    assert!(!listed.contains(UPSTREAM_SECRET));
    assert!(!listed.contains("127.0.0.1"), "{listed}");

    assert_eq!(call(&report, 0)["text"], "5");
    assert_eq!(call(&report, 0)["error"], false);
    assert_eq!(call(&report, 1)["error"], false, "{}", call(&report, 1));
    assert_eq!(
        std::fs::read_to_string(endpoint.work.join("note.txt")).unwrap(),
        "from an agent"
    );
    assert!(call(&report, 2)["text"]
        .as_str()
        .unwrap()
        .contains("from an agent"));
    assert_eq!(call(&report, 3)["text"], "2");
    let limited = call(&report, 4);
    assert_eq!(limited["error"], true, "{limited}");
    assert!(limited["text"]
        .as_str()
        .unwrap()
        .contains("rate limit for tool 'fx__add'"));
    assert!(
        call(&report, 5)["exception"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{}",
        call(&report, 5)
    );

    // Another key: its scopes allow fx/add only.
    let calls = json!([["fx__echo", {"text": "hi"}], ["fx__add", {"a": 4, "b": 4}]]);
    let report = client(&endpoint.url, "reader-key", mode, calls).await;
    assert_eq!(call(&report, 0)["error"], true);
    assert!(call(&report, 0)["text"]
        .as_str()
        .unwrap()
        .contains("may not use this tool"));
    assert_eq!(call(&report, 1)["text"], "8");

    // Every call went through the gate, under its caller.
    let seen = endpoint.gate.seen.lock().unwrap().clone();
    let expected: Vec<(String, String, String)> = [
        ("alice", "fx__add", "ran"),
        ("alice", "windlass__write_file", "ran"),
        ("alice", "windlass__read_file", "ran"),
        ("alice", "fx__add", "ran"),
        ("alice", "fx__add", "denied"),
        ("reader", "fx__echo", "denied"),
        ("reader", "fx__add", "ran"),
    ]
    .iter()
    .map(|(k, t, o)| (k.to_string(), t.to_string(), o.to_string()))
    .collect();
    assert_eq!(seen, expected);
    let _ = std::fs::remove_dir_all(&endpoint.work);
}

/// The current protocol revision, as the client negotiates it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_on_the_current_revision() {
    serves_one_governed_server("auto").await;
}

/// Clients still on the initialize handshake (with a session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_with_the_handshake() {
    serves_one_governed_server("legacy").await;
}

/// No key, no MCP.
#[tokio::test]
async fn an_unknown_key_is_refused_before_mcp() {
    let endpoint = start().await;
    let status = reqwest::Client::new()
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);
}

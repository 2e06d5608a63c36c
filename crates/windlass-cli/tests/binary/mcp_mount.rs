//! `/mcp` on the real binary: with keys configured, the operator's MCP
//! server (the Python fixture, reached with a bearer token only the gateway
//! knows) and the built-ins are one MCP server to the official MCP Python
//! client, tools named by label, every call through the governance gate
//! under the caller's key; without keys there is no `/mcp`.

use std::path::PathBuf;

use serde_json::{json, Value};
use windlass_testkit::mcp::{McpFixture, PyMcp};
use windlass_testkit::FakeUpstream;

use crate::replica_support::Replica;

const UPSTREAM_SECRET: &str = "upstream-mcp-secret-7f3a";

fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::env::var("WINDLASS_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".venv-test/bin/python"))
}

/// The official MCP client against `url` with `token`; its JSON report.
async fn client(url: &str, token: &str, calls: Value) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/endpoint_client.py");
    let out = tokio::process::Command::new(python())
        .arg(script)
        .args([url, token, "auto", &calls.to_string()])
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

fn write_config(dir: &std::path::Path, fixture_url: &str, keys: bool) -> PathBuf {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "kept in the gateway's work dir").unwrap();
    let keys = if keys {
        "[[server.keys]]\nname = \"alice\"\nkey = \"sk-alice\"\ntenant = \"acme\"\n\n"
    } else {
        ""
    };
    let config = dir.join("windlass.toml");
    std::fs::write(
        &config,
        format!(
            "{keys}[[mcp.servers]]\nlabel = \"fx\"\nurl = {fixture_url:?}\n\
             bearer_token = {UPSTREAM_SECRET:?}\n\n\
             [builtins]\nenabled = [\"read_file\"]\nwork_dir = {:?}\n\n\
             [governance]\ntool_rate_limit = {{ per_minute = 1, burst = 2 }}\n",
            work.display().to_string()
        ),
    )
    .unwrap();
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_client_sees_one_governed_server_at_slash_mcp() {
    if !python().exists() {
        eprintln!("MCP fixtures missing (./scripts/mcp-fixtures.sh): skipping");
        return;
    }
    let fixture = McpFixture::python(PyMcp::V2).await;
    let dir = std::env::temp_dir().join(format!("windlass-mcp-mount-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = write_config(&dir, &fixture.url, true);
    let upstream = FakeUpstream::start().await;
    let db = dir.join("w.db");
    let gw = Replica::start(
        db.to_str().unwrap(),
        &upstream.base_url(),
        &["--config", config.to_str().unwrap()],
    )
    .await;
    let url = gw.url("/mcp");

    let calls = json!([
        ["fx__add", {"a": 2, "b": 3}],
        ["windlass__read_file", {"path": "notes.txt"}],
        ["fx__add", {"a": 1, "b": 1}],
        // The third fx__add of the minute: past the per-tool limit of 2.
        ["fx__add", {"a": 1, "b": 1}],
    ]);
    let report = client(&url, "sk-alice", calls).await;
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in ["fx__add", "fx__echo", "windlass__read_file"] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    // The upstream's address and credentials stay in the gateway.
    let listed = report["listed"].to_string();
    assert!(!listed.contains(UPSTREAM_SECRET), "{listed}");
    assert!(!listed.contains(&fixture.url), "{listed}");

    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["text"], "5", "{report}");
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("kept in the gateway's work dir"),
        "{report}"
    );
    assert_eq!(calls[2]["text"], "2", "{report}");
    assert_eq!(calls[3]["error"], true, "{report}");
    assert!(
        calls[3]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("rate limit"),
        "{report}"
    );

    // No key, a wrong key: the API's 401, before MCP is reached.
    for auth in [None, Some("Bearer sk-wrong")] {
        let mut req = gw
            .client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 401);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_api_key", "{body}");
    }
    drop(gw);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_keys_there_is_no_mcp_endpoint() {
    let dir = std::env::temp_dir().join(format!("windlass-mcp-nokeys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = write_config(&dir, "http://127.0.0.1:1/mcp", false);
    let upstream = FakeUpstream::start().await;
    let db = dir.join("w.db");
    let gw = Replica::start(
        db.to_str().unwrap(),
        &upstream.base_url(),
        &["--config", config.to_str().unwrap()],
    )
    .await;
    let resp = gw
        .client
        .post(gw.url("/mcp"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    drop(gw);
    let _ = std::fs::remove_dir_all(&dir);
}

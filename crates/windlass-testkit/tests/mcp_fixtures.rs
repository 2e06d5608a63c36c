//! The real MCP fixture servers start and answer `initialize`, over streamable
//! HTTP and stdio. Needs `./scripts/mcp-fixtures.sh` (run by `./scripts/test.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use windlass_testkit::mcp::{python_stdio_command, McpFixture, PyMcp};

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "windlass-test", "version": "0"}
        }
    })
}

/// POSTs `initialize` and returns the JSON-RPC response, whether the server
/// answers plain JSON or an SSE stream.
async fn post_initialize(url: &str) -> Value {
    let resp = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize())
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("POST initialize");
    assert!(resp.status().is_success(), "status {}", resp.status());
    let body = resp.text().await.expect("initialize body");
    let json = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| d.starts_with('{'))
        .unwrap_or(body.trim());
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad initialize answer {body:?}: {e}"))
}

fn assert_initialized(resp: &Value) {
    assert_eq!(resp["id"], 1, "{resp}");
    assert!(resp["result"]["protocolVersion"].is_string(), "{resp}");
}

#[tokio::test]
async fn python_v2_answers_initialize() {
    let server = McpFixture::python(PyMcp::V2).await;
    assert_initialized(&post_initialize(&server.url).await);
}

#[tokio::test]
async fn python_v1_answers_initialize() {
    let server = McpFixture::python(PyMcp::V1).await;
    assert_initialized(&post_initialize(&server.url).await);
}

#[tokio::test]
async fn python_v2_stateless_json_answers_initialize() {
    let server = McpFixture::python_with(PyMcp::V2, &["--stateless", "--json"]).await;
    assert_initialized(&post_initialize(&server.url).await);
}

#[tokio::test]
async fn everything_answers_initialize() {
    let server = McpFixture::everything().await;
    assert_initialized(&post_initialize(&server.url).await);
}

#[tokio::test]
async fn killed_fixture_stops_answering() {
    let mut server = McpFixture::python(PyMcp::V2).await;
    server.kill();
    let err = reqwest::Client::new()
        .post(&server.url)
        .json(&initialize())
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    assert!(err.is_err(), "killed server still answers");
}

#[test]
fn python_v2_stdio_answers_initialize() {
    let (program, args) = python_stdio_command(PyMcp::V2);
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn stdio fixture");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", initialize()).unwrap();
    stdin.flush().unwrap();

    // Read one line on a thread so a silent server fails the test instead of hanging it.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    let line = line.expect("no stdio answer within 20 s");
    assert_initialized(&serde_json::from_str(&line).expect("JSON-RPC line"));
}

//! McpServers against real MCP servers: the fixture server on the official
//! Python SDK (mcp 2.x and 1.x) and the reference `server-everything`, over
//! streamable HTTP and stdio.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{everything_stdio_command, python_stdio_command, restart_at, McpFixture, PyMcp};
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpError, McpHub, McpServerRef, ToolResult};
use windlass_protocol::{McpApprovalMode, McpRequireApproval, ToolOutput};
use windlass_tools::{McpConfig, McpServerConfig, McpServers, ServerState};

const FIXTURE_TOOLS: [&str; 7] = ["add", "crash", "echo", "fail", "multi", "slow", "weather"];

fn http(label: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        label: label.into(),
        url: Some(url.into()),
        ..McpServerConfig::default()
    }
}

fn stdio(label: &str, (command, args): (String, Vec<String>)) -> McpServerConfig {
    McpServerConfig {
        label: label.into(),
        command: Some(command),
        args,
        ..McpServerConfig::default()
    }
}

fn hub(servers: Vec<McpServerConfig>) -> Arc<McpServers> {
    McpServers::try_start(McpConfig {
        call_timeout_secs: 20,
        servers,
        ..McpConfig::default()
    })
    .expect("valid config")
}

fn configured(label: &str) -> McpServerRef {
    McpServerRef {
        label: label.into(),
        url: None,
        headers: Vec::new(),
    }
}

fn declared(url: &str) -> McpServerRef {
    McpServerRef {
        label: "declared".into(),
        url: Some(url.into()),
        headers: vec![("X-Test".into(), "1".into())],
    }
}

fn text(result: &ToolResult) -> &str {
    match &result.output {
        ToolOutput::Text(t) => t,
        other => panic!("expected text output, got {other:?}"),
    }
}

async fn names(hub: &McpServers, server: &McpServerRef) -> Vec<String> {
    let mut names: Vec<String> = hub
        .list_tools(server, &CancellationToken::new())
        .await
        .expect("list_tools")
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    names
}

async fn call(
    hub: &McpServers,
    server: &McpServerRef,
    tool: &str,
    args: &str,
) -> Result<ToolResult, McpError> {
    hub.call_tool(server, tool, args, &CancellationToken::new())
        .await
}

async fn wait_for_state(hub: &McpServers, label: &str, state: ServerState, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let status = hub
            .status()
            .into_iter()
            .find(|s| s.label == label)
            .expect("status");
        if status.state == state {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{label} stayed {:?} ({:?})",
            status.state,
            status.last_error
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn lists_and_calls(version: PyMcp) {
    let fixture = McpFixture::python(version).await;
    let hub = hub(vec![http("fx", &fixture.url)]);
    let server = configured("fx");
    assert_eq!(names(&hub, &server).await, FIXTURE_TOOLS);

    let sum = call(&hub, &server, "add", r#"{"a": 2, "b": 3}"#)
        .await
        .expect("add");
    assert!(!sum.is_error);
    assert_eq!(text(&sum), "5");

    let failed = call(&hub, &server, "fail", r#"{"message": "bad input"}"#)
        .await
        .expect("fail");
    assert!(failed.is_error);
    assert_eq!(text(&failed), "bad input");

    let multi = call(&hub, &server, "multi", "{}").await.expect("multi");
    let out = text(&multi);
    assert!(
        out.starts_with("first part\nsecond part\n[image: image/png, data:image/png;base64,iVBOR"),
        "{out}"
    );
    assert!(out.ends_with(r#"{"total":3}"#), "{out}");

    let weather = call(&hub, &server, "weather", r#"{"city": "Oslo"}"#)
        .await
        .expect("weather");
    let value: serde_json::Value = serde_json::from_str(text(&weather)).expect("weather is JSON");
    assert_eq!(value["city"], "Oslo");
    assert_eq!(value["conditions"], "sunny");

    let status = &hub.status()[0];
    assert_eq!(status.state, ServerState::Connected);
    assert_eq!(status.transport, "http");
    assert_eq!(status.tools.len(), FIXTURE_TOOLS.len());
    assert!(status.protocol_version.is_some());
}

#[tokio::test]
async fn python_v2_lists_and_calls() {
    lists_and_calls(PyMcp::V2).await;
}

#[tokio::test]
async fn python_v1_lists_and_calls() {
    lists_and_calls(PyMcp::V1).await;
}

#[tokio::test]
async fn server_everything_lists_and_calls() {
    let fixture = McpFixture::everything().await;
    let hub = hub(vec![http("every", &fixture.url)]);
    let server = configured("every");
    let tools = names(&hub, &server).await;
    assert!(tools.contains(&"get-sum".to_owned()), "{tools:?}");
    let sum = call(&hub, &server, "get-sum", r#"{"a": 2, "b": 3}"#)
        .await
        .expect("get-sum");
    assert!(text(&sum).contains('5'), "{}", text(&sum));
    let image = call(&hub, &server, "get-tiny-image", "{}")
        .await
        .expect("image");
    assert!(text(&image).contains("[image: image/png, data:image/png;base64,"));
}

#[tokio::test]
async fn unknown_tool_is_reported() {
    let fixture = McpFixture::python(PyMcp::V2).await;
    let hub = hub(vec![http("fx", &fixture.url)]);
    match call(&hub, &configured("fx"), "no_such_tool", "{}").await {
        Err(McpError::Failed(message)) => assert!(message.contains("no_such_tool"), "{message}"),
        // Servers of protocol 2025-11-25 report it as a tool error.
        Ok(result) => {
            assert!(result.is_error);
            assert!(text(&result).contains("no_such_tool"), "{}", text(&result));
        }
        Err(other) => panic!("unexpected {other:?}"),
    }
    let bad = call(&hub, &configured("fx"), "add", "[1, 2]").await;
    assert!(matches!(bad, Err(McpError::Failed(_))), "{bad:?}");
    let unknown_label = call(&hub, &configured("nope"), "add", "{}").await;
    assert!(
        matches!(unknown_label, Err(McpError::Refused(_))),
        "{unknown_label:?}"
    );
}

#[tokio::test]
async fn every_page_of_tools_is_listed() {
    for version in [PyMcp::V2, PyMcp::V1] {
        let fixture = McpFixture::python_with(version, &["--page-size", "2"]).await;
        let hub = hub(vec![http("paged", &fixture.url)]);
        assert_eq!(
            names(&hub, &configured("paged")).await,
            FIXTURE_TOOLS,
            "{version:?}"
        );
    }
}

#[tokio::test]
async fn stdio_servers_list_and_call() {
    let hub = hub(vec![
        stdio("py", python_stdio_command(PyMcp::V2)),
        stdio("every", everything_stdio_command()),
    ]);
    assert_eq!(names(&hub, &configured("py")).await, FIXTURE_TOOLS);
    let sum = call(&hub, &configured("py"), "add", r#"{"a": 20, "b": 22}"#)
        .await
        .expect("add");
    assert_eq!(text(&sum), "42");
    let tools = names(&hub, &configured("every")).await;
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    let echo = call(&hub, &configured("every"), "echo", r#"{"message": "hi"}"#)
        .await
        .expect("echo");
    assert!(text(&echo).contains("hi"));
    let status = hub.status();
    assert_eq!(status[0].transport, "stdio");
    assert_eq!(status[0].url, None);
}

#[tokio::test]
async fn crashed_stdio_server_is_respawned() {
    let hub = hub(vec![stdio("py", python_stdio_command(PyMcp::V2))]);
    let server = configured("py");
    call(&hub, &server, "add", r#"{"a": 1, "b": 1}"#)
        .await
        .expect("first call");
    let crashed = call(&hub, &server, "crash", "{}").await;
    assert!(
        matches!(crashed, Err(McpError::Unavailable(_))),
        "{crashed:?}"
    );
    let again = call(&hub, &server, "echo", r#"{"text": "back"}"#)
        .await
        .expect("respawned");
    assert_eq!(text(&again), "back");
    wait_for_state(&hub, "py", ServerState::Connected, Duration::from_secs(5)).await;
}

#[tokio::test]
async fn killed_http_server_mid_call_is_unavailable_then_recovers() {
    let mut fixture = McpFixture::python(PyMcp::V2).await;
    let hub = hub(vec![http("fx", &fixture.url)]);
    let server = configured("fx");
    call(&hub, &server, "add", r#"{"a": 1, "b": 1}"#)
        .await
        .expect("first call");

    let pending = {
        let (hub, server) = (hub.clone(), server.clone());
        tokio::spawn(async move { call(&hub, &server, "slow", r#"{"ms": 10000}"#).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    fixture.kill();
    let result = pending.await.expect("join");
    assert!(
        matches!(result, Err(McpError::Unavailable(_))),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "noticed after {:?}",
        started.elapsed()
    );
    assert_eq!(hub.status()[0].state, ServerState::Unavailable);

    // Same port, new process: the old session id is unknown there.
    let _back = restart_at(&fixture.url, PyMcp::V2).await;
    let sum = call(&hub, &server, "add", r#"{"a": 2, "b": 2}"#)
        .await
        .expect("after restart");
    assert_eq!(text(&sum), "4");
    wait_for_state(&hub, "fx", ServerState::Connected, Duration::from_secs(5)).await;
}

#[tokio::test]
async fn restarted_http_server_session_is_reinitialized() {
    let mut fixture = McpFixture::python(PyMcp::V1).await;
    let hub = hub(vec![http("fx", &fixture.url)]);
    let server = configured("fx");
    call(&hub, &server, "add", r#"{"a": 1, "b": 1}"#)
        .await
        .expect("first call");
    // Restarted while idle: the next request carries a session id the new
    // process answers with 404, which must re-initialize and retry.
    fixture.kill();
    let _back = restart_at(&fixture.url, PyMcp::V1).await;
    let sum = call(&hub, &server, "add", r#"{"a": 3, "b": 4}"#)
        .await
        .expect("after restart");
    assert_eq!(text(&sum), "7");
}

#[tokio::test]
async fn slow_call_times_out_and_cancel_stops_it() {
    let fixture = McpFixture::python(PyMcp::V2).await;
    let hub = McpServers::start(McpConfig {
        call_timeout_secs: 1,
        servers: vec![http("fx", &fixture.url)],
        ..McpConfig::default()
    });
    let server = configured("fx");
    names(&hub, &server).await;
    let timed_out = call(&hub, &server, "slow", r#"{"ms": 3000}"#).await;
    assert_eq!(timed_out, Err(McpError::Timeout(1000)));

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let cancelled = hub
        .call_tool(&server, "slow", r#"{"ms": 3000}"#, &cancel)
        .await;
    assert_eq!(cancelled, Err(McpError::Cancelled));
    assert!(started.elapsed() < Duration::from_millis(900));

    // The session survives both.
    let sum = call(&hub, &server, "add", r#"{"a": 1, "b": 2}"#)
        .await
        .expect("add");
    assert_eq!(text(&sum), "3");
}

#[tokio::test]
async fn request_declared_loopback_needs_the_allowlist() {
    let fixture = McpFixture::python(PyMcp::V2).await;
    let strict = hub(Vec::new());
    let server = declared(&fixture.url);
    let refused = strict.check(&server).await;
    match &refused {
        Err(McpError::Refused(message)) => assert!(message.contains("127.0.0.1"), "{message}"),
        other => panic!("expected refusal, got {other:?}"),
    }
    let listed = strict.list_tools(&server, &CancellationToken::new()).await;
    assert!(matches!(listed, Err(McpError::Refused(_))), "{listed:?}");

    let open = McpServers::start(McpConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        ..McpConfig::default()
    });
    open.check(&server).await.expect("allowed");
    assert_eq!(names(&open, &server).await, FIXTURE_TOOLS);
    let sum = call(&open, &server, "add", r#"{"a": 5, "b": 6}"#)
        .await
        .expect("add");
    assert_eq!(text(&sum), "11");
    assert!(
        open.status().is_empty(),
        "declared servers are not operator status"
    );
}

#[tokio::test]
async fn unknown_label_and_bad_urls_are_refused() {
    let hub = hub(Vec::new());
    let missing = hub.check(&configured("ghost")).await;
    assert_eq!(
        missing,
        Err(McpError::Refused(
            "no MCP server labelled 'ghost' is configured".into()
        ))
    );
    for url in [
        "ftp://example.com/mcp",
        "http://169.254.169.254/mcp",
        "http://[::1]:1/mcp",
        "not a url",
    ] {
        let refused = hub.check(&declared(url)).await;
        assert!(
            matches!(refused, Err(McpError::Refused(_))),
            "{url}: {refused:?}"
        );
    }
}

#[tokio::test]
async fn server_down_at_boot_connects_later() {
    let mut fixture = McpFixture::python(PyMcp::V2).await;
    fixture.kill();
    let hub = hub(vec![McpServerConfig {
        require_approval: Some(McpRequireApproval::Mode(McpApprovalMode::Never)),
        ..http("late", &fixture.url)
    }]);
    // Startup does not wait for it, and `check` accepts the label anyway.
    hub.check(&configured("late"))
        .await
        .expect("configured label");
    wait_for_state(
        &hub,
        "late",
        ServerState::Unavailable,
        Duration::from_secs(10),
    )
    .await;
    let status = &hub.status()[0];
    assert!(status.last_error.is_some());
    assert_eq!(
        hub.default_approval("late"),
        Some(McpRequireApproval::Mode(McpApprovalMode::Never))
    );
    let down = call(&hub, &configured("late"), "add", r#"{"a": 1, "b": 1}"#).await;
    assert!(matches!(down, Err(McpError::Unavailable(_))), "{down:?}");

    let _back = restart_at(&fixture.url, PyMcp::V2).await;
    // The background retry (backoff of a few seconds at most) finds it.
    wait_for_state(
        &hub,
        "late",
        ServerState::Connected,
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(hub.status()[0].tools.len(), FIXTURE_TOOLS.len());
    let sum = call(&hub, &configured("late"), "add", r#"{"a": 1, "b": 1}"#)
        .await
        .expect("add");
    assert_eq!(text(&sum), "2");
}

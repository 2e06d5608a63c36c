//! MCP failures: a tool reporting `isError`, a tool name the server does not
//! have, a server crashing or killed mid-call (the loop goes on), a
//! request-declared server that is down, and the outbound guard refusing
//! loopback / private `server_url`s unless allowlisted.

use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{check, db};
use windlass_testkit::{McpFixture, PyMcp, Reply};
use windlass_tools::McpConfig;

fn body(url: &str) -> Value {
    json!({"model": "m", "input": "go", "tools": [mcp_tool("calc", url)]})
}

/// `fail` answers `isError: true`: the `mcp_call` fails with an
/// `mcp_tool_execution_error` carrying the content, the model sees the
/// error text, and the response completes.
#[tokio::test]
async fn tool_error_gives_failed_mcp_call() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        gw.upstream
            .push(Reply::tool_call("calc__fail", r#"{"message":"boom 42"}"#));
        gw.upstream.push(Reply::text("it failed"));
        let run = create(&gw, mode, &body(&fx.url)).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["status"], "failed", "{mode:?}: {call}");
        assert!(call["output"].is_null(), "{call}");
        assert_eq!(call["error"]["type"], "mcp_tool_execution_error", "{call}");
        assert_eq!(call["error"]["content"][0]["type"], "text", "{call}");
        assert_eq!(call["error"]["content"][0]["text"], "boom 42", "{call}");
        let id = call["id"].as_str().unwrap();
        let tm = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(tm.len(), 1);
        assert_eq!(tm[0].0, id);
        assert!(tm[0].1.contains("boom 42"), "{tm:?}");
        if let Some(cap) = &run.sse {
            let trace = mcp_trace(cap);
            assert!(trace.contains(&"mcp_call.failed".to_owned()), "{trace:?}");
            assert!(!trace.contains(&"mcp_call.completed".to_owned()));
            assert_eq!(trace.last().unwrap(), "done:mcp_call");
        }
    }
}

/// The model calls a tool the server does not list: nothing reaches the
/// server, the model gets an error output naming the tool, the loop goes on.
#[tokio::test]
async fn unknown_tool_from_model_is_an_error_output() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        gw.upstream.push(Reply::tool_call("calc__nope", "{}"));
        gw.upstream.push(Reply::text("sorry"));
        let run = create(&gw, mode, &body(&fx.url)).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert!(gw.hub.calls().is_empty(), "{mode:?}: {:?}", gw.hub.calls());
        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2, "{mode:?}");
        let tm = tool_messages(&reqs[1]);
        assert_eq!(tm.len(), 1, "{mode:?}: {tm:?}");
        assert!(tm[0].1.starts_with("Error"), "{tm:?}");
        assert!(tm[0].1.contains("calc__nope"), "{tm:?}");
        // No successful MCP call is reported.
        for c in outputs_of(&run.resp, "mcp_call") {
            assert_ne!(c["status"], "completed", "{c}");
        }
        assert_eq!(final_text(&run.resp), "sorry");
    }
}

/// A tool that kills its server mid-call: the call fails with a protocol
/// error, the model is told, and the response completes.
#[tokio::test]
async fn server_crash_mid_call_fails_the_call_and_loop_continues() {
    for (v, mode) in [(PyMcp::V2, Mode::Json), (PyMcp::V1, Mode::Sse)] {
        let fx = McpFixture::python(v).await;
        let gw = start(loopback_config()).await;
        gw.upstream.push(Reply::tool_call("calc__crash", "{}"));
        gw.upstream.push(Reply::text("the server crashed"));
        let started = Instant::now();
        let run = create(&gw, mode, &body(&fx.url)).await;
        let tag = format!("{v:?} {mode:?}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{tag}: took {:?}",
            started.elapsed()
        );
        assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["status"], "failed", "{tag}: {call}");
        assert_eq!(call["error"]["type"], "mcp_protocol_error", "{tag}: {call}");
        assert!(call["error"]["code"].is_i64(), "{call}");
        assert!(call["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        assert!(call["output"].is_null());
        let tm = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(tm[0].0, call["id"].as_str().unwrap());
        assert!(tm[0].1.starts_with("Error"), "{tag}: {tm:?}");
        assert_eq!(final_text(&run.resp), "the server crashed");
        if let Some(cap) = &run.sse {
            assert!(mcp_trace(cap).contains(&"mcp_call.failed".to_owned()));
        }
    }
}

/// The server is killed while a slow call runs: the call fails at once (not
/// after the tool's 20 s), and the next model turn happens.
#[tokio::test]
async fn server_killed_during_slow_call() {
    for mode in MODES {
        let mut fx = McpFixture::python(PyMcp::V2).await;
        let gw = start(loopback_config()).await;
        gw.upstream
            .push(Reply::tool_call("calc__slow", r#"{"ms":20000}"#));
        gw.upstream.push(Reply::text("after the kill"));
        let url = fx.url.clone();
        let hub = gw.hub.clone();
        let killer = tokio::spawn(async move {
            hub.wait_calls(1, Duration::from_secs(20)).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            fx.kill();
            fx
        });
        let started = Instant::now();
        let run = create(&gw, mode, &body(&url)).await;
        let took = started.elapsed();
        let _fx = killer.await.unwrap();
        assert!(took < Duration::from_secs(12), "{mode:?}: took {took:?}");
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let call = only(&run.resp, "mcp_call");
        assert_eq!(call["status"], "failed", "{mode:?}: {call}");
        assert!(call["error"].is_object(), "{call}");
        assert_eq!(gw.upstream.request_count(), 2);
        assert_eq!(final_text(&run.resp), "after the kill");
    }
}

/// A request-declared server that does not answer: listing fails, 424.
#[tokio::test]
async fn declared_server_down_fails_listing() {
    let gw = start(McpConfig {
        call_timeout_secs: 5,
        ..loopback_config()
    })
    .await;
    let b = body(&dead_url());
    let (status, resp) = gw.post_json("/v1/responses", &b).await;
    let err = check::assert_api_error(status, &resp, 424);
    assert_eq!(err["code"], "mcp_list_tools_failed", "{resp}");
    assert_eq!(err["param"], "tools[0]", "{resp}");
    let cap = gw.stream(&b).await;
    cap.assert_well_formed();
    assert_eq!(terminal(&cap), "response.failed");
    assert!(mcp_trace(&cap).contains(&"mcp_list_tools.failed".to_owned()));
    assert!(only(cap.final_response(), "mcp_list_tools")["error"].is_string());
    assert_eq!(gw.upstream.request_count(), 0);
}

/// The outbound guard: a loopback `server_url` is refused with a 400 naming
/// `tools[i].server_url`, nothing stored, the server never contacted;
/// allowlisting 127.0.0.1 lets it through, and only it.
#[tokio::test]
async fn ssrf_guard_refuses_private_urls_unless_allowlisted() {
    let fx = McpFixture::python(PyMcp::V2).await;
    let strict = start(McpConfig::default()).await;
    let tools = json!([
        {"type": "function", "name": "f", "parameters": {"type": "object"}},
        mcp_tool("calc", &fx.url),
    ]);
    let b = json!({"model": "m", "input": "go", "tools": tools});
    for stream in [false, true] {
        let mut b = b.clone();
        b["stream"] = json!(stream);
        let (status, resp) = strict.post_json("/v1/responses", &b).await;
        let err = check::assert_api_error(status, &resp, 400);
        assert_eq!(err["code"], "mcp_server_refused", "{resp}");
        assert_eq!(err["param"], "tools[1].server_url", "{resp}");
    }
    for url in [
        "http://10.1.2.3/mcp",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:9/mcp",
        "http://192.168.0.1/mcp",
    ] {
        let (status, resp) = strict.post_json("/v1/responses", &body(url)).await;
        let err = check::assert_api_error(status, &resp, 400);
        assert_eq!(err["code"], "mcp_server_refused", "{url}: {resp}");
        assert_eq!(err["param"], "tools[0].server_url", "{url}: {resp}");
    }
    assert!(strict.hub.ops().is_empty(), "{:?}", strict.hub.ops());
    assert_eq!(strict.upstream.request_count(), 0);
    db::assert_db_empty(&strict, "refused server_url");

    // Allowlisted: the same request works; other private ranges stay refused.
    let open = start(loopback_config()).await;
    open.upstream.push(Reply::text("hi"));
    let run = create(&open, Mode::Json, &b).await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "message"],
        "{}",
        run.resp
    );
    for url in ["http://10.1.2.3/mcp", "http://169.254.169.254/mcp"] {
        let (status, resp) = open.post_json("/v1/responses", &body(url)).await;
        assert_eq!(status, 400, "{url}: {resp}");
        assert_eq!(resp["error"]["code"], "mcp_server_refused");
    }
}

/// Only http(s) URLs are accepted as `server_url`.
#[tokio::test]
async fn non_http_server_url_is_refused() {
    let gw = start(loopback_config()).await;
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/mcp", "not a url"] {
        let (status, resp) = gw.post_json("/v1/responses", &body(url)).await;
        let err = check::assert_api_error(status, &resp, 400);
        assert_eq!(err["param"], "tools[0].server_url", "{url}: {resp}");
    }
    assert!(gw.hub.ops().is_empty());
    db::assert_db_empty(&gw, "bad scheme");
}

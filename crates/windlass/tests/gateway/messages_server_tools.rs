//! Anthropic's server tools on `/v1/messages`, run by Windlass's hosted
//! executors: `web_search_20250305` over a SearXNG-shaped backend and
//! `code_execution_20250522` in the real code interpreter (bubblewrap),
//! shown as `server_tool_use` + `web_search_tool_result` /
//! `code_execution_tool_result` in JSON and stream, replayed from the
//! blocks a client sends back, and refused when nothing serves them.

use std::sync::Arc;

use serde_json::{json, Value};
use windlass_engine::{ContainerStore, FileStore, ToolExecutor};
use windlass_store::SqliteStore;
use windlass_testkit::messages::{frames, post};
use windlass_testkit::scenario::tool_messages;
use windlass_testkit::search_backend::searxng;
use windlass_testkit::{Gateway, GatewayOptions, Reply};
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, CodeInterpreterExecutor, Runner,
};

async fn search_gateway() -> Gateway {
    let url = searxng().await;
    let config: windlass_tools::hosted::web_search::WebSearchConfig = serde_json::from_value(
        json!({"provider": "searxng", "url": url, "allow_hosts": ["127.0.0.1"]}),
    )
    .unwrap();
    Gateway::start_with(GatewayOptions {
        executors: vec![Arc::new(config.build().unwrap())],
        ..Default::default()
    })
    .await
}

fn search_body() -> Value {
    json!({"model": "m", "max_tokens": 200,
           "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
                      "allowed_domains": ["tokio.rs", "docs.rs"],
                      "cache_control": {"type": "ephemeral"}}],
           "messages": [{"role": "user", "content": "What is tokio?"}]})
}

#[tokio::test]
async fn web_search_runs_in_the_loop_and_shows_as_server_blocks() {
    let gw = search_gateway().await;
    gw.upstream.push(Reply::tool_call(
        "web_search",
        r#"{"query":"tokio runtime"}"#,
    ));
    gw.upstream.push(Reply::text("See https://tokio.rs/."));
    let (status, text) = post(&gw, &search_body()).await;
    assert_eq!(status, 200, "{text}");
    let msg: Value = serde_json::from_str(&text).unwrap();
    let content = msg["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{msg}");
    let id = content[0]["id"].as_str().unwrap();
    assert_eq!(
        content[0],
        json!({"type": "server_tool_use", "id": id, "name": "web_search",
               "input": {"query": "tokio runtime"}})
    );
    assert_eq!(content[1]["type"], "web_search_tool_result");
    assert_eq!(content[1]["tool_use_id"], id);
    let results = &content[1]["content"];
    assert_eq!(results[0]["type"], "web_search_result", "{results}");
    assert_eq!(results[0]["url"], "https://tokio.rs/");
    assert_eq!(results[0]["title"], "Tokio");
    assert_eq!(results[1]["url"], "https://docs.rs/tokio");
    assert_eq!(content[2]["text"], "See https://tokio.rs/.");
    assert_eq!(msg["stop_reason"], "end_turn");

    // The model was offered Windlass's `web_search` function, and read the
    // results as its output; `max_uses` is the response's tool-call budget.
    let reqs = gw.upstream.requests();
    assert_eq!(reqs[0]["tools"][0]["function"]["name"], "web_search");
    let (_, seen) = tool_messages(&reqs[1])
        .into_iter()
        .find(|(call, _)| call == id)
        .expect("the result as a tool message");
    assert!(seen.contains("1. Tokio\n   https://tokio.rs/"), "{seen}");

    // The client sends the turn back: the model reads the same search.
    gw.upstream.clear_requests();
    gw.upstream.push(Reply::text("Glad to help."));
    let mut next = search_body();
    next["messages"] = json!([
        {"role": "user", "content": "What is tokio?"},
        {"role": "assistant", "content": msg["content"].clone()},
        {"role": "user", "content": "thanks"}
    ]);
    let (status, text) = post(&gw, &next).await;
    assert_eq!(status, 200, "{text}");
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 1, "no search ran again");
    let (_, replayed) = tool_messages(&reqs[0])
        .into_iter()
        .find(|(call, _)| call == id)
        .expect("the replayed result");
    assert_eq!(replayed, seen);
}

#[tokio::test]
async fn the_stream_writes_the_call_and_its_result_as_blocks() {
    let gw = search_gateway().await;
    gw.upstream.push(Reply::tool_call(
        "web_search",
        r#"{"query":"tokio runtime"}"#,
    ));
    gw.upstream.push(Reply::text("Tokio is a runtime."));
    let mut body = search_body();
    body["stream"] = json!(true);
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 200, "{text}");
    let events = frames(&text);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(e, _)| e == "content_block_start")
        .map(|(_, d)| &d["content_block"])
        .collect();
    let kinds: Vec<&str> = starts.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["server_tool_use", "web_search_tool_result", "text"],
        "{text}"
    );
    assert_eq!(starts[0]["input"], json!({}));
    assert_eq!(starts[1]["content"][0]["url"], "https://tokio.rs/");
    let input: String = events
        .iter()
        .filter(|(_, d)| d["index"] == 0 && d["delta"]["type"] == "input_json_delta")
        .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&input).unwrap(),
        json!({"query": "tokio runtime"})
    );
    // Each block stops before the next starts.
    let order: Vec<(String, i64)> = events
        .iter()
        .filter(|(e, _)| e.starts_with("content_block_st"))
        .map(|(e, d)| (e.clone(), d["index"].as_i64().unwrap()))
        .collect();
    for (k, pair) in order.chunks(2).enumerate() {
        assert_eq!(
            pair[0],
            ("content_block_start".to_owned(), k as i64),
            "{order:?}"
        );
        assert_eq!(
            pair[1],
            ("content_block_stop".to_owned(), k as i64),
            "{order:?}"
        );
    }
    assert_eq!(events.last().unwrap().0, "message_stop");
}

#[tokio::test]
async fn server_tools_without_an_executor_are_refused_by_name() {
    // The default engine drops an unserved `web_search` for Responses
    // clients (Codex); a Messages client is told instead.
    let gw = Gateway::start().await;
    for (tool, named) in [
        (
            json!({"type": "web_search_20250305", "name": "web_search"}),
            "web_search",
        ),
        (
            json!({"type": "web_search_20260209", "name": "web_search"}),
            "web_search",
        ),
        (
            json!({"type": "code_execution_20250522", "name": "code_execution"}),
            "code",
        ),
        (
            json!({"type": "web_fetch_20250910", "name": "web_fetch"}),
            "web_fetch_20250910",
        ),
    ] {
        let body = json!({"model": "m", "max_tokens": 50, "tools": [tool],
                          "messages": [{"role": "user", "content": "hi"}]});
        let (status, text) = post(&gw, &body).await;
        assert_eq!(status, 400, "{tool}: {text}");
        let err: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(err["error"]["type"], "invalid_request_error");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{message}");
        assert!(message.contains("not available"), "{message}");
    }
    // Settings Windlass's search cannot honour are refused by name.
    let body = json!({"model": "m", "max_tokens": 50,
                      "tools": [{"type": "web_search_20250305", "name": "web_search",
                                 "blocked_domains": ["example.com"]}],
                      "messages": [{"role": "user", "content": "hi"}]});
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("tools.0.blocked_domains"), "{text}");
    // A result block must follow its `server_tool_use`.
    let body = json!({"model": "m", "max_tokens": 50, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9", "content": []}]},
        {"role": "user", "content": "and?"}]});
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("messages.1.content.0.tool_use_id"), "{text}");
    assert!(
        gw.upstream.requests().is_empty(),
        "nothing reached the upstream"
    );
}

async fn code_gateway() -> (Gateway, std::path::PathBuf) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("windlass-msg-ci-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(
        SqliteStore::open(dir.join("ci.sqlite").to_str().unwrap())
            .await
            .unwrap(),
    );
    let runner = Runner::start(CodeInterpreterConfig {
        enabled: true,
        work_root: Some(dir.join("work")),
        ..Default::default()
    })
    .await;
    assert_eq!(runner.unavailable(), None, "the sandbox must run here");
    let exec = CodeInterpreterExecutor::new(
        runner,
        store.clone() as Arc<dyn ContainerStore>,
        Some(store as Arc<dyn FileStore>),
    );
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![Arc::new(exec) as Arc<dyn ToolExecutor>],
        ..Default::default()
    })
    .await;
    (gw, dir)
}

#[tokio::test]
async fn code_execution_runs_python_in_the_sandbox() {
    let (gw, dir) = code_gateway().await;
    gw.upstream.push(Reply::tool_call(
        "code_interpreter",
        r#"{"code":"print(6 * 7)"}"#,
    ));
    gw.upstream.push(Reply::text("It is 42."));
    let body = json!({"model": "m", "max_tokens": 200,
                      "tools": [{"type": "code_execution_20250522", "name": "code_execution"}],
                      "messages": [{"role": "user", "content": "six times seven?"}]});
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 200, "{text}");
    let msg: Value = serde_json::from_str(&text).unwrap();
    let content = &msg["content"];
    let id = content[0]["id"].as_str().unwrap();
    assert_eq!(
        content[0],
        json!({"type": "server_tool_use", "id": id, "name": "code_execution",
               "input": {"code": "print(6 * 7)"}})
    );
    assert_eq!(
        content[1],
        json!({"type": "code_execution_tool_result", "tool_use_id": id,
               "content": {"type": "code_execution_result", "stdout": "42\n", "stderr": "",
                           "return_code": 0, "content": []}})
    );
    assert_eq!(content[2]["text"], "It is 42.");

    // Failing code: the interpreter keeps one log and no exit status (as
    // OpenAI's does), so the traceback is in stdout and the code is 0.
    gw.upstream.push(Reply::tool_call(
        "code_interpreter",
        r#"{"code":"raise ValueError('nope')"}"#,
    ));
    gw.upstream.push(Reply::text("It failed."));
    let (status, text) = post(&gw, &body).await;
    assert_eq!(status, 200, "{text}");
    let msg: Value = serde_json::from_str(&text).unwrap();
    let result = &msg["content"][1]["content"];
    assert_eq!(result["type"], "code_execution_result", "{result}");
    assert!(
        result["stdout"]
            .as_str()
            .unwrap()
            .contains("ValueError: nope"),
        "{result}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

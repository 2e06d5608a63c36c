//! WebSocket mode on `/v1/responses`: several `response.create` messages on
//! one connection, the SSE event schemas as messages, error events, chained
//! responses (stored and `store: false`), auth on the upgrade, and cancel of
//! the running response when the socket closes.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};
use windlass_server::ServerConfig;
use windlass_testkit::{Gateway, GatewayOptions, Reply, ToolCallSpec};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

const TERMINAL: [&str; 3] = [
    "response.completed",
    "response.failed",
    "response.incomplete",
];

async fn open(gw: &Gateway, key: Option<&str>) -> Socket {
    let url = gw.url("/v1/responses").replacen("http://", "ws://", 1);
    let mut request = url.into_client_request().expect("request");
    if let Some(key) = key {
        let value = format!("Bearer {key}").parse().expect("header");
        request.headers_mut().insert("authorization", value);
    }
    connect_async(request).await.expect("upgrade").0
}

async fn send(ws: &mut Socket, body: Value) {
    ws.send(Message::Text(body.to_string().into()))
        .await
        .expect("send");
}

async fn next_json(ws: &mut Socket) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a message in time")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(t) = msg {
            return serde_json::from_str(&t).expect("JSON message");
        }
    }
}

/// The events of one turn, up to its terminal event or error event.
async fn turn(ws: &mut Socket, body: Value) -> Vec<Value> {
    send(ws, body).await;
    let mut events = Vec::new();
    loop {
        let event = next_json(ws).await;
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        events.push(event);
        if TERMINAL.contains(&kind.as_str()) || kind == "error" {
            return events;
        }
    }
}

fn final_response(events: &[Value]) -> &Value {
    let last = events.last().expect("events");
    assert!(
        TERMINAL.contains(&last["type"].as_str().unwrap_or_default()),
        "{last}"
    );
    &last["response"]
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn three_chained_responses_on_one_socket_with_a_client_tool_call_between() {
    let gw = Gateway::start().await;
    gw.upstream.push_all([
        Reply::text("Noted: Oslo."),
        Reply::tool_calls(vec![ToolCallSpec::new("get_weather", r#"{"city":"Oslo"}"#)]),
        Reply::text("It is sunny in Oslo."),
    ]);
    let mut ws = open(&gw, None).await;
    let first = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "input": "I live in Oslo."}),
    )
    .await;
    assert_eq!(first[0]["type"], "response.created");
    let seqs: Vec<u64> = first
        .iter()
        .map(|e| e["sequence_number"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    let r1 = final_response(&first).clone();
    assert_eq!(r1["status"], "completed");

    let tools = json!([{"type": "function", "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    let second = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "tools": tools,
            "previous_response_id": r1["id"], "input": "Weather at home?"}),
    )
    .await;
    let r2 = final_response(&second).clone();
    assert_eq!(r2["previous_response_id"], r1["id"]);
    let call = &r2["output"][0];
    assert_eq!(call["type"], "function_call", "{r2}");
    assert_eq!(
        second[0]["sequence_number"], 0,
        "each response counts from 0"
    );

    let third = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "tools": tools,
            "previous_response_id": r2["id"],
            "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}]}),
    )
    .await;
    let r3 = final_response(&third);
    assert_eq!(r3["status"], "completed");
    assert_eq!(
        r3["output"][0]["content"][0]["text"],
        "It is sunny in Oslo."
    );
    // The upstream saw the whole chain on the last turn.
    let last = gw.upstream.requests().pop().expect("request");
    let texts = user_texts(&last).join("\n");
    assert!(texts.contains("I live in Oslo."), "{texts}");
    assert!(texts.contains("sunny"), "{texts}");
    // Stored responses are readable over HTTP like any other.
    let (status, got) = gw
        .get_json(&format!("/v1/responses/{}", r3["id"].as_str().unwrap()))
        .await;
    assert_eq!(status, 200);
    assert_eq!(got["status"], "completed");
}

#[tokio::test]
async fn an_unstored_response_continues_on_its_socket_and_nowhere_else() {
    let gw = Gateway::start().await;
    gw.upstream
        .push_all([Reply::text("OK"), Reply::text("cobalt")]);
    let mut ws = open(&gw, None).await;
    let first = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "store": false,
            "input": "Remember the code word: cobalt."}),
    )
    .await;
    let id = final_response(&first)["id"].clone();
    let (status, _) = gw
        .get_json(&format!("/v1/responses/{}", id.as_str().unwrap()))
        .await;
    assert_eq!(status, 404, "store:false is never written");
    let second = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": id, "input": "The code word?"}),
    )
    .await;
    assert_eq!(final_response(&second)["status"], "completed");
    let texts = user_texts(&gw.upstream.requests().pop().unwrap()).join("\n");
    assert!(texts.contains("Remember the code word: cobalt."), "{texts}");
    assert!(texts.contains("OK"), "{texts}");

    let mut other = open(&gw, None).await;
    let miss = turn(
        &mut other,
        json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": id, "input": "again"}),
    )
    .await;
    assert_eq!(miss.len(), 1);
    assert_eq!(miss[0]["type"], "error");
    assert_eq!(miss[0]["status"], 400);
    assert_eq!(miss[0]["error"]["code"], "previous_response_not_found");
    assert_eq!(miss[0]["error"]["param"], "previous_response_id");
}

#[tokio::test]
async fn a_failed_continuation_forgets_the_unstored_response() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("OK"));
    let mut ws = open(&gw, None).await;
    let first = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "store": false, "input": "hi"}),
    )
    .await;
    let id = final_response(&first)["id"].clone();
    let bad = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "store": false, "previous_response_id": id,
            "input": [{"type": "function_call_output", "call_id": "call_nope", "output": "x"}]}),
    )
    .await;
    assert_eq!(bad[0]["type"], "error");
    assert_eq!(bad[0]["status"], 400);
    let retry = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "store": false,
            "previous_response_id": id, "input": "again"}),
    )
    .await;
    assert_eq!(retry[0]["error"]["code"], "previous_response_not_found");
    assert_eq!(
        gw.upstream.requests().len(),
        1,
        "nothing ran after the first"
    );
}

#[tokio::test]
async fn refused_messages_get_error_events_and_the_socket_stays_usable() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("fine"));
    let mut ws = open(&gw, None).await;
    for (body, param, code) in [
        (
            json!({"type": "response.create", "model": "m", "input": "x", "stream": true}),
            "stream",
            "unsupported_parameter",
        ),
        (
            json!({"type": "response.create", "model": "m", "input": "x", "background": false}),
            "background",
            "unsupported_parameter",
        ),
        (
            json!({"type": "response.create", "model": "m", "input": "x", "stream_options": {}}),
            "stream_options",
            "unsupported_parameter",
        ),
        (
            json!({"model": "m", "input": "x"}),
            "type",
            "invalid_event_type",
        ),
        (
            json!({"type": "response.create", "model": "m", "input": "x", "bogus": 1}),
            "bogus",
            "unknown_parameter",
        ),
        (
            json!({"type": "response.create", "model": "m", "temperature": "hot"}),
            "temperature",
            "invalid_value",
        ),
    ] {
        let events = turn(&mut ws, body.clone()).await;
        assert_eq!(events.len(), 1, "{body}");
        let e = &events[0];
        assert_eq!(e["type"], "error", "{e}");
        assert_eq!(e["status"], 400, "{e}");
        assert_eq!(e["error"]["param"], param, "{e}");
        assert_eq!(e["error"]["code"], code, "{e}");
        assert_eq!(e["error"]["type"], "invalid_request_error", "{e}");
    }
    ws.send(Message::Text("{not json".into())).await.unwrap();
    let e = next_json(&mut ws).await;
    assert_eq!(
        (e["type"].as_str(), e["status"].as_u64()),
        (Some("error"), Some(400))
    );
    assert!(
        gw.upstream.requests().is_empty(),
        "nothing refused reached the model"
    );
    let ok = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "input": "x"}),
    )
    .await;
    assert_eq!(final_response(&ok)["status"], "completed");
}

#[tokio::test]
async fn the_upgrade_needs_a_key_like_any_request() {
    let server = ServerConfig {
        api_keys: vec!["sekrit".into()],
        ..ServerConfig::default()
    };
    let gw = Gateway::start_with(GatewayOptions {
        server,
        ..Default::default()
    })
    .await;
    gw.upstream.push(Reply::text("hello"));
    let url = gw.url("/v1/responses").replacen("http://", "ws://", 1);
    let refused = connect_async(url.as_str()).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 401),
        other => panic!("expected a 401, got {other:?}"),
    }
    let mut ws = open(&gw, Some("sekrit")).await;
    let ok = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "input": "x"}),
    )
    .await;
    assert_eq!(final_response(&ok)["status"], "completed");
    // A plain GET is told what the route is for, in the OpenAI error shape.
    let plain = reqwest::Client::new()
        .get(gw.url("/v1/responses"))
        .bearer_auth("sekrit")
        .send()
        .await
        .unwrap();
    assert!(plain.status().is_client_error());
    let body: Value = plain.json().await.unwrap();
    assert_eq!(body["error"]["code"], "websocket_upgrade_required");
}

#[tokio::test]
async fn closing_the_socket_cancels_the_running_response() {
    let gw = Gateway::start().await;
    // About 2.4 s in all: it is still streaming when the socket closes.
    gw.upstream.push(
        Reply::text("word ".repeat(60))
            .chunk_chars(5)
            .delay_between_chunks(Duration::from_millis(40)),
    );
    let mut ws = open(&gw, None).await;
    send(
        &mut ws,
        json!({"type": "response.create", "model": "m", "input": "go"}),
    )
    .await;
    let created = next_json(&mut ws).await;
    assert_eq!(created["type"], "response.created");
    let id = created["response"]["id"].as_str().unwrap().to_owned();
    while next_json(&mut ws).await["type"] != "response.output_text.delta" {}
    ws.close(None).await.unwrap();
    drop(ws);
    assert!(
        gw.upstream
            .wait_for_disconnects(1, Duration::from_secs(10))
            .await,
        "the upstream call was stopped"
    );
    let mut status = Value::Null;
    for _ in 0..100 {
        let (code, r) = gw.get_json(&format!("/v1/responses/{id}")).await;
        if code == 200 && r["status"] != "in_progress" {
            status = r["status"].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "cancelled");
}

#[tokio::test]
async fn a_socket_works_in_its_keys_tenant_only() {
    use windlass_testkit::tenants::{key, resolve};
    let mut opts = GatewayOptions::default();
    opts.server.keys = resolve(&[key("alice", "acme"), key("bob", "globex")]);
    let gw = Gateway::start_with(opts).await;
    gw.upstream
        .push_all([Reply::text("acme answer"), Reply::text("acme again")]);
    let mut alice = open(&gw, Some("sk-alice")).await;
    let first = turn(
        &mut alice,
        json!({"type": "response.create", "model": "m", "input": "hi"}),
    )
    .await;
    let id = final_response(&first)["id"].clone();
    // Another tenant's stored response is an unknown id, as over HTTP.
    let mut bob = open(&gw, Some("sk-bob")).await;
    let miss = turn(
        &mut bob,
        json!({"type": "response.create", "model": "m", "previous_response_id": id, "input": "x"}),
    )
    .await;
    assert_eq!(miss[0]["error"]["code"], "previous_response_not_found");
    let again = turn(
        &mut alice,
        json!({"type": "response.create", "model": "m", "previous_response_id": id, "input": "x"}),
    )
    .await;
    assert_eq!(final_response(&again)["status"], "completed");
    assert_eq!(gw.upstream.requests().len(), 2);
}

/// `generate: false` (Codex's warm-up): prepared, the model not called,
/// and the next `response.create` continuing it runs with its input.
#[tokio::test]
async fn generate_false_prepares_without_the_model_and_the_next_create_uses_it() {
    let gw = Gateway::start().await;
    let mut ws = open(&gw, None).await;
    for store in [false, true] {
        gw.upstream.clear_requests();
        let warm = turn(
            &mut ws,
            json!({"type": "response.create", "model": "m", "store": store, "generate": false,
                   "instructions": "Be brief.",
                   "input": [{"type": "message", "role": "user", "content": "remember: teal"}]}),
        )
        .await;
        let kinds: Vec<&str> = warm
            .iter()
            .map(|e| e["type"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            kinds,
            ["response.created", "response.completed"],
            "{warm:?}"
        );
        let warm_response = final_response(&warm);
        assert_eq!(warm_response["output"], json!([]));
        assert!(gw.upstream.requests().is_empty(), "the model was called");

        gw.upstream.push(Reply::text("teal"));
        let events = turn(
            &mut ws,
            json!({"type": "response.create", "model": "m", "store": store,
                   "previous_response_id": warm_response["id"],
                   "input": [{"type": "message", "role": "user", "content": "which colour?"}]}),
        )
        .await;
        assert_eq!(final_response(&events)["status"], "completed", "{events:?}");
        let sent = gw.upstream.last_request().expect("called");
        assert_eq!(
            user_texts(&sent),
            ["remember: teal", "which colour?"],
            "{sent}"
        );
    }
    // A bad value is refused by name.
    let err = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "input": "x", "generate": "no"}),
    )
    .await;
    assert_eq!(err[0]["error"]["param"], "generate", "{err:?}");
}

/// An MCP hub with one server (`calc`, tool `add`) that counts listings.
#[derive(Default)]
struct CountingHub(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl windlass::engine::McpHub for CountingHub {
    async fn check(
        &self,
        _server: &windlass::engine::McpServerRef,
    ) -> Result<(), windlass::engine::McpError> {
        Ok(())
    }

    async fn list_tools(
        &self,
        _server: &windlass::engine::McpServerRef,
        _cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<windlass::protocol::McpToolInfo>, windlass::engine::McpError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(vec![windlass::protocol::McpToolInfo {
            name: "add".into(),
            description: Some("Adds".into()),
            input_schema: json!({"type": "object"}),
            annotations: None,
        }])
    }

    async fn call_tool(
        &self,
        _server: &windlass::engine::McpServerRef,
        _tool: &str,
        _arguments: &str,
        _cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<windlass::engine::ToolResult, windlass::engine::McpError> {
        panic!("no tool call in this test")
    }
}

/// The warm-up lists the request's MCP servers; the response continuing it
/// reuses the listing instead of listing again.
#[tokio::test]
async fn a_warm_up_lists_mcp_servers_once_for_the_next_response() {
    let hub = std::sync::Arc::new(CountingHub::default());
    let opts = GatewayOptions {
        mcp: Some(hub.clone()),
        ..GatewayOptions::default()
    };
    let gw = Gateway::start_with(opts).await;
    let mut ws = open(&gw, None).await;
    let tools = json!([{"type": "mcp", "server_label": "calc", "require_approval": "never"}]);
    let warm = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "generate": false, "tools": tools,
               "input": "get ready"}),
    )
    .await;
    let kinds: Vec<&str> = warm
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert!(
        kinds.contains(&"response.mcp_list_tools.completed"),
        "{kinds:?}"
    );
    let warm_response = final_response(&warm);
    assert_eq!(
        warm_response["output"][0]["type"], "mcp_list_tools",
        "{warm_response}"
    );
    assert_eq!(hub.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(gw.upstream.requests().is_empty());

    gw.upstream.push(Reply::text("ready"));
    let events = turn(
        &mut ws,
        json!({"type": "response.create", "model": "m", "tools": tools,
               "previous_response_id": warm_response["id"], "input": "go"}),
    )
    .await;
    assert_eq!(final_response(&events)["status"], "completed", "{events:?}");
    assert_eq!(
        hub.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "listed again"
    );
    let sent = gw.upstream.last_request().expect("called");
    assert_eq!(sent["tools"][0]["function"]["name"], "calc__add", "{sent}");
}

//! `GET /metrics` after JSON, SSE, tool, failing, background and WebSocket
//! requests: the names, labels and counts a Prometheus scrape sees.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};
use windlass_server::{McpDirectory, ServerConfig};
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

/// One sample line of the exposition: `name{k="v",...} value`.
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (head, value) = line.rsplit_once(' ').expect("name and value");
            let (name, labels) = match head.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (head, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once("=\"").expect("label");
                    (k.to_owned(), v.trim_end_matches('"').to_owned())
                })
                .collect();
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().expect("number"),
            }
        })
        .collect()
}

/// The value of the one sample of `name` whose labels include `labels`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.iter().any(|(sk, sv)| sk == k && sv == v))
        })
        .map(|s| s.value)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} matches {found:?}");
    found.first().copied()
}

fn label_values<'a>(samples: &'a [Sample], name: &str, label: &str) -> Vec<&'a str> {
    let mut v: Vec<&str> = samples
        .iter()
        .filter(|s| s.name.starts_with(name))
        .flat_map(|s| s.labels.iter().filter(|(k, _)| k == label))
        .map(|(_, v)| v.as_str())
        .collect();
    v.sort();
    v.dedup();
    v
}

struct Directory;

impl McpDirectory for Directory {
    fn servers(&self) -> Vec<Value> {
        vec![
            json!({"label": "calc", "state": "connected"}),
            json!({"label": "docs", "state": "unavailable"}),
        ]
    }
}

async fn gateway(server: ServerConfig, mock: &MockExecutor) -> Gateway {
    let mut gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        server,
        mcp_directory: Some(Arc::new(Directory)),
        ..Default::default()
    })
    .await;
    let mut auth = HeaderMap::new();
    auth.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sk-test"));
    gw.client = reqwest::Client::builder()
        .default_headers(auth)
        .build()
        .expect("client");
    gw
}

fn keyed() -> ServerConfig {
    ServerConfig {
        api_keys: vec!["sk-test".into()],
        ..Default::default()
    }
}

async fn scrape(gw: &Gateway, key: bool) -> (u16, String) {
    let mut req = reqwest::Client::new().get(gw.url("/metrics"));
    if key {
        req = req.bearer_auth("sk-test");
    }
    let resp = req.send().await.expect("scrape");
    let status = resp.status().as_u16();
    let content_type = resp.headers().get("content-type").cloned();
    let body = resp.text().await.expect("body");
    if status == 200 {
        let ct = content_type.expect("content type");
        assert!(ct
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4"));
    }
    (status, body)
}

#[tokio::test]
async fn a_scrape_shows_json_sse_tool_and_failed_responses() {
    let mock = MockExecutor::new().tool("add", MockBehavior::Ok("42".into()));
    let gw = gateway(keyed(), &mock).await;
    let up = &gw.upstream;
    let tools = json!([{"type": "function", "name": "add", "parameters": {"type": "object"}}]);

    // JSON, one turn.
    up.push(Reply::text("hello").usage(10, 2));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m1", "input": "hi"}))
        .await;
    assert_eq!((s, r["status"].as_str()), (200, Some("completed")), "{r}");
    // SSE, one turn.
    up.push(Reply::text("streamed").usage(7, 3));
    let cap = gw.stream(&json!({"model": "m1", "input": "hi"})).await;
    cap.assert_well_formed();
    // A server-side tool, then the answer: two turns.
    up.push(Reply::tool_calls(vec![ToolCallSpec::new("add", "{}")]).usage(5, 1));
    up.push(Reply::text("42").usage(6, 1));
    let body = json!({"model": "m2", "input": "add", "tools": tools});
    let (s, r) = gw.post_json("/v1/responses", &body).await;
    assert_eq!((s, r["status"].as_str()), (200, Some("completed")), "{r}");
    // The upstream fails: a failed response.
    up.push(Reply::error(500, "boom"));
    let (s, _) = gw
        .post_json("/v1/responses", &json!({"model": "m1", "input": "x"}))
        .await;
    assert!(s >= 500, "{s}");
    // Refused before running (unknown field): no response at all.
    let (s, _) = gw
        .post_json("/v1/responses", &json!({"model": "m1", "bogus": 1}))
        .await;
    assert_eq!(s, 400);

    // Open to scrapers by default, though the API needs a key.
    let (status, text) = scrape(&gw, false).await;
    assert_eq!(status, 200, "{text}");
    let m = parse(&text);
    let responses = |model, status| {
        value(
            &m,
            "windlass_responses_total",
            &[
                ("gen_ai_request_model", model),
                ("key", "key-1"),
                ("status", status),
            ],
        )
    };
    assert_eq!(responses("m1", "completed"), Some(2.0), "{text}");
    assert_eq!(responses("m2", "completed"), Some(1.0));
    assert_eq!(responses("m1", "failed"), Some(1.0));
    assert_eq!(
        label_values(&m, "windlass_responses_total", "status"),
        ["completed", "failed"]
    );

    let req = "gen_ai_server_request_duration_seconds_count";
    let labels = [("gen_ai_request_model", "m1"), ("status", "completed")];
    assert_eq!(value(&m, req, &labels), Some(2.0));
    // Only the streamed response has a first token to time.
    let ttft = "gen_ai_server_time_to_first_token_seconds_count";
    assert_eq!(
        value(&m, ttft, &[("gen_ai_request_model", "m1")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(value(&m, ttft, &[("gen_ai_request_model", "m2")]), None);

    // Upstream calls: one per model turn; the failed one carries its error.
    let op = "gen_ai_client_operation_duration_seconds_count";
    let chat = ("gen_ai_operation_name", "chat");
    assert_eq!(
        value(&m, op, &[chat, ("gen_ai_request_model", "m2")]),
        Some(2.0)
    );
    let failed = [
        chat,
        ("gen_ai_request_model", "m1"),
        ("error_type", "upstream_error"),
    ];
    assert_eq!(value(&m, op, &failed), Some(1.0), "{text}");
    let tokens = "gen_ai_client_token_usage_sum";
    let input = [
        ("gen_ai_request_model", "m2"),
        ("gen_ai_token_type", "input"),
    ];
    assert_eq!(value(&m, tokens, &input), Some(11.0));
    let output = [
        ("gen_ai_request_model", "m1"),
        ("gen_ai_token_type", "output"),
    ];
    assert_eq!(value(&m, tokens, &output), Some(5.0));

    let tool = "windlass_tool_call_duration_seconds_count";
    let add = [("gen_ai_tool_name", "add"), ("outcome", "ok")];
    assert_eq!(value(&m, tool, &add), Some(1.0));
    assert_eq!(
        value(
            &m,
            "windlass_agentic_turns_sum",
            &[("gen_ai_request_model", "m2")]
        ),
        Some(2.0)
    );
    assert_eq!(value(&m, "windlass_inflight_responses", &[]), Some(0.0));
    assert_eq!(
        value(&m, "windlass_mcp_server_up", &[("server", "calc")]),
        Some(1.0)
    );
    assert_eq!(
        value(&m, "windlass_mcp_server_up", &[("server", "docs")]),
        Some(0.0)
    );
    // Four saves (every run stored), each timed.
    let store = "windlass_store_operation_duration_seconds_count";
    assert_eq!(
        value(&m, store, &[("operation", "save")]),
        Some(4.0),
        "{text}"
    );

    // Labels never carry ids or user text.
    assert!(!text.contains("resp_"), "{text}");
    assert!(!text.contains("hello") && !text.contains("sk-test"));
}

/// The samples once nothing runs: a run is unregistered only after its
/// metrics were recorded, so every ended run is counted by then.
async fn settled(gw: &Gateway) -> Vec<Sample> {
    for _ in 0..400 {
        let m = parse(&scrape(gw, false).await.1);
        if value(&m, "windlass_inflight_responses", &[]) == Some(0.0) {
            return m;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("responses still in flight");
}

async fn inflight_now(gw: &Gateway) -> Option<f64> {
    let m = parse(&scrape(gw, false).await.1);
    value(&m, "windlass_inflight_responses", &[])
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn websocket(gw: &Gateway) -> Socket {
    let url = gw.url("/v1/responses").replacen("http://", "ws://", 1);
    let mut request = url.into_client_request().expect("request");
    let auth = "Bearer sk-test".parse().expect("header");
    request.headers_mut().insert("authorization", auth);
    tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade")
        .0
}

/// Sends a `response.create` and reads to its terminal event.
async fn ws_response(ws: &mut Socket, model: &str) -> Value {
    let create = json!({"type": "response.create", "model": model, "input": "hi"});
    let text = create.to_string().into();
    ws.send(Message::Text(text)).await.expect("send");
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("frame");
        let Message::Text(t) = msg else { continue };
        let event: Value = serde_json::from_str(&t).expect("JSON");
        if event["type"] == "response.completed" {
            return event["response"].clone();
        }
    }
}

#[tokio::test]
async fn background_and_websocket_runs_are_counted_like_the_others() {
    let mock = MockExecutor::new();
    let gw = gateway(keyed(), &mock).await;
    let up = &gw.upstream;

    // A background response whose upstream never answers: in flight until
    // it is cancelled.
    up.push(Reply::text("never").stall());
    let body = json!({"model": "m-bg", "input": "hi", "background": true});
    let (s, r) = gw.post_json("/v1/responses", &body).await;
    assert_eq!((s, r["status"].as_str()), (200, Some("queued")), "{r}");
    assert!(up.wait_for_requests(1, Duration::from_secs(20)).await);
    assert_eq!(inflight_now(&gw).await, Some(1.0));
    let id = r["id"].as_str().expect("id");
    let (s, r) = gw
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!((s, r["status"].as_str()), (200, Some("cancelled")), "{r}");
    // One that completes (two turns would need tools: one is enough here).
    up.push(Reply::text("done").usage(4, 2));
    let (s, r) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(s, 200, "{r}");
    settled(&gw).await;

    // WebSocket: one response completes, one is cut by the socket closing.
    let mut ws = websocket(&gw).await;
    up.push(Reply::text("over the socket").usage(3, 3));
    let done = ws_response(&mut ws, "m-ws").await;
    assert_eq!(done["status"], "completed");
    up.push(Reply::text("never").stall());
    let create = json!({"type": "response.create", "model": "m-ws", "input": "hi"});
    ws.send(Message::Text(create.to_string().into()))
        .await
        .expect("send");
    assert!(up.wait_for_requests(4, Duration::from_secs(20)).await);
    assert_eq!(inflight_now(&gw).await, Some(1.0));
    ws.close(None).await.expect("close");

    let m = settled(&gw).await;
    let responses = |model, status| {
        value(
            &m,
            "windlass_responses_total",
            &[
                ("gen_ai_request_model", model),
                ("key", "key-1"),
                ("status", status),
            ],
        )
    };
    for model in ["m-bg", "m-ws"] {
        assert_eq!(responses(model, "completed"), Some(1.0), "{model}");
        assert_eq!(responses(model, "cancelled"), Some(1.0), "{model}");
        let duration = "gen_ai_server_request_duration_seconds_count";
        let labels = [("gen_ai_request_model", model), ("status", "completed")];
        assert_eq!(value(&m, duration, &labels), Some(1.0), "{model}");
        let turns = "windlass_agentic_turns_count";
        let labels = [("gen_ai_request_model", model)];
        assert_eq!(value(&m, turns, &labels), Some(2.0), "{model}");
        // The upstream calls of both surfaces, with their token usage.
        let calls: f64 = m
            .iter()
            .filter(|s| s.name == "gen_ai_client_operation_duration_seconds_count")
            .filter(|s| {
                s.labels
                    .contains(&("gen_ai_request_model".into(), model.into()))
            })
            .map(|s| s.value)
            .sum();
        assert!(calls >= 1.0, "{model}");
    }
    // The streamed WebSocket response had a first token to time.
    let ttft = "gen_ai_server_time_to_first_token_seconds_count";
    assert_eq!(
        value(&m, ttft, &[("gen_ai_request_model", "m-ws")]),
        Some(1.0)
    );
}

#[tokio::test]
async fn scrapes_can_require_the_key_or_be_switched_off() {
    let mock = MockExecutor::new();
    let mut server = keyed();
    server.metrics.require_key = true;
    let gw = gateway(server, &mock).await;
    assert_eq!(scrape(&gw, false).await.0, 401);
    assert_eq!(scrape(&gw, true).await.0, 200);

    let mut server = keyed();
    server.metrics.enabled = false;
    let gw = gateway(server, &mock).await;
    assert_eq!(scrape(&gw, true).await.0, 404);
    gw.upstream.push(Reply::text("hello"));
    let (s, _) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn model_names_past_the_cap_are_reported_as_other() {
    let mock = MockExecutor::new();
    let gw = gateway(keyed(), &mock).await;
    for n in 0..205 {
        gw.upstream.push(Reply::text("ok"));
        let body = json!({"model": format!("model-{n}"), "input": "hi"});
        assert_eq!(gw.post_json("/v1/responses", &body).await.0, 200);
    }
    let m = parse(&scrape(&gw, false).await.1);
    let models = label_values(&m, "windlass_responses_total", "gen_ai_request_model");
    assert_eq!(models.len(), 201, "200 names and other");
    let other = [("gen_ai_request_model", "other"), ("status", "completed")];
    assert_eq!(value(&m, "windlass_responses_total", &other), Some(5.0));
}

#[tokio::test]
async fn each_response_is_counted_under_the_surface_it_came_through() {
    let mock = MockExecutor::new();
    let gw = gateway(keyed(), &mock).await;
    let up = &gw.upstream;
    // The same model through three front doors.
    up.push(Reply::text("via responses").usage(3, 2));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m-s", "input": "hi"}))
        .await;
    assert_eq!(s, 200, "{r}");
    for stream in [false, true] {
        up.push(Reply::text("via messages").usage(3, 2));
        let resp = gw
            .client
            .post(gw.url("/v1/messages"))
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "m-s", "max_tokens": 20, "stream": stream,
                          "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 200);
        let body = resp.text().await.expect("body");
        let done = if stream {
            "message_stop"
        } else {
            "via messages"
        };
        assert!(body.contains(done), "{body}");
    }
    let mut ws = websocket(&gw).await;
    up.push(Reply::text("via socket").usage(3, 3));
    assert_eq!(ws_response(&mut ws, "m-s").await["status"], "completed");
    ws.close(None).await.expect("close");

    let m = settled(&gw).await;
    let count = |surface| {
        let labels = [
            ("gen_ai_request_model", "m-s"),
            ("status", "completed"),
            ("surface", surface),
        ];
        (
            value(&m, "windlass_responses_total", &labels),
            value(&m, "gen_ai_server_request_duration_seconds_count", &labels),
        )
    };
    assert_eq!(count("responses"), (Some(1.0), Some(1.0)));
    assert_eq!(count("messages"), (Some(2.0), Some(2.0)));
    assert_eq!(count("websocket"), (Some(1.0), Some(1.0)));
    assert_eq!(
        label_values(&m, "windlass_responses_total", "surface"),
        ["messages", "responses", "websocket"]
    );
}

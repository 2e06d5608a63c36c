//! Request ids: a client's safe `x-request-id` is echoed, a missing or bad
//! one is replaced by a new one, and the id is on every log line of the
//! request, including the one completion line per response. At `info` a
//! response writes that one line; the per-turn and per-tool lines are at
//! `debug`.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};
use windlass_server::ServerConfig;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

/// Every log line of this test binary down to `debug`, as JSON lines.
fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || Capture(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
        buf
    })
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log lines whose spans carry `request_id`.
fn lines_of(request_id: &str) -> Vec<Value> {
    let text = String::from_utf8(logs().lock().unwrap().clone()).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| {
            l["spans"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["request_id"] == request_id))
        })
        .collect()
}

fn message(line: &Value) -> &str {
    line["fields"]["message"].as_str().unwrap_or_default()
}

async fn gateway() -> Gateway {
    logs();
    let mock = MockExecutor::new().tool("add", MockBehavior::Ok("42".into()));
    let mut gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        server: ServerConfig {
            api_keys: vec!["sk-obs-secret-key".into()],
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let mut auth = reqwest::header::HeaderMap::new();
    auth.insert("authorization", "Bearer sk-obs-secret-key".parse().unwrap());
    gw.client = reqwest::Client::builder()
        .default_headers(auth)
        .build()
        .unwrap();
    gw
}

async fn create(gw: &Gateway, body: &Value, request_id: Option<&str>) -> (u16, String, String) {
    let mut req = gw.client.post(gw.url("/v1/responses")).json(body);
    if let Some(id) = request_id {
        req = req.header("x-request-id", id);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    (status, id, resp.text().await.unwrap())
}

#[tokio::test]
async fn a_clients_id_is_echoed_and_on_every_line_of_its_response() {
    let gw = gateway().await;
    gw.upstream
        .push(Reply::tool_calls(vec![ToolCallSpec::new("add", "{}")]).usage(9, 2));
    gw.upstream.push(Reply::text("42").usage(12, 1));
    let body = json!({
        "model": "m-req",
        "input": "zebra-user-text",
        "tools": [{"type": "function", "name": "add", "parameters": {"type": "object"}}],
    });
    let (status, id, text) = create(&gw, &body, Some("client-req-1")).await;
    assert_eq!((status, id.as_str()), (200, "client-req-1"), "{text}");

    let lines = lines_of("client-req-1");
    // The engine's own lines (model turns, the tool call) carry it too.
    let messages: Vec<&str> = lines.iter().map(message).collect();
    assert!(messages.contains(&"model turn done"), "{messages:?}");
    assert!(messages.contains(&"tool call done"), "{messages:?}");
    // At info, the whole response is its completion line.
    let info: Vec<&str> = lines
        .iter()
        .filter(|l| !matches!(l["level"].as_str(), Some("DEBUG" | "TRACE")))
        .map(message)
        .collect();
    assert_eq!(info, ["response finished"], "{lines:?}");
    let done: Vec<&Value> = lines
        .iter()
        .filter(|l| message(l) == "response finished")
        .collect();
    assert_eq!(done.len(), 1, "one completion line: {lines:?}");
    let f = &done[0]["fields"];
    assert_eq!(done[0]["target"], "windlass::access");
    assert_eq!(f["key"], "key-1");
    assert_eq!(f["tenant"], "default");
    assert_eq!(f["model"], "m-req");
    assert_eq!(f["status"], "completed");
    assert_eq!(
        (f["turns"].as_u64(), f["tool_calls"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(f["input_tokens"], 21);
    assert_eq!(f["output_tokens"], 3);
    assert!(f["duration_ms"].as_f64().is_some());
    // No access line on top of the completion line.
    assert!(!messages.contains(&"request"), "{messages:?}");
    // Never the key or what the user wrote.
    let all = String::from_utf8(logs().lock().unwrap().clone()).unwrap();
    assert!(!all.contains("sk-obs-secret-key"));
    assert!(!all.contains("zebra-user-text"));
}

#[tokio::test]
async fn streamed_responses_keep_the_id_after_the_handler_returned() {
    let gw = gateway().await;
    gw.upstream.push(Reply::text("streamed"));
    let body = json!({"model": "m", "input": "hi", "stream": true});
    let (status, id, text) = create(&gw, &body, Some("client-sse-1")).await;
    assert_eq!((status, id.as_str()), (200, "client-sse-1"));
    assert!(text.contains("response.completed"));
    let lines = lines_of("client-sse-1");
    let done: Vec<&Value> = lines
        .iter()
        .filter(|l| message(l) == "response finished")
        .collect();
    assert_eq!(done.len(), 1, "{lines:?}");
    assert_eq!(done[0]["fields"]["status"], "completed");
}

#[tokio::test]
async fn a_missing_or_unsafe_id_is_replaced_by_a_new_one() {
    let gw = gateway().await;
    let body = json!({"model": "m", "input": "hi"});
    let long = "a".repeat(129);
    let mut seen = Vec::new();
    for sent in [
        None,
        Some("has space"),
        Some("quote\"d"),
        Some(long.as_str()),
    ] {
        gw.upstream.push(Reply::text("ok"));
        let (status, id, _) = create(&gw, &body, sent).await;
        assert_eq!(status, 200);
        assert!(id.starts_with("req_") && id.len() == 52, "{sent:?} -> {id}");
        assert_ne!(Some(id.as_str()), sent);
        let lines = lines_of(&id);
        let done = lines.iter().filter(|l| message(l) == "response finished");
        assert_eq!(done.count(), 1, "{lines:?}");
        seen.push(id);
    }
    seen.dedup();
    assert_eq!(seen.len(), 4, "a new id each time");
}

#[tokio::test]
async fn other_requests_get_an_id_and_one_access_line() {
    let gw = gateway().await;
    let resp = gw
        .client
        .get(gw.url("/v1/responses/resp_unknown"))
        .header("x-request-id", "client-get-1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.headers()["x-request-id"], "client-get-1");
    // Refused before authentication: the id is there too.
    let resp = reqwest::Client::new()
        .get(gw.url("/v1/models"))
        .header("x-request-id", "client-401")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(resp.headers()["x-request-id"], "client-401");

    let lines = lines_of("client-get-1");
    let access: Vec<&Value> = lines.iter().filter(|l| message(l) == "request").collect();
    assert_eq!(access.len(), 1, "{lines:?}");
    let f = &access[0]["fields"];
    assert_eq!(
        (f["method"].as_str(), f["status"].as_u64()),
        (Some("GET"), Some(404))
    );
    assert_eq!(f["path"], "/v1/responses/resp_unknown");
    assert_eq!(lines_of("client-401").len(), 1);
}

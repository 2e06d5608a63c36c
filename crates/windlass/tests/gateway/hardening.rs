//! Hardening (issue 16) over real HTTP: fail-closed auth, browser safety,
//! request limits, secrets, in-flight consistency, connection bounds.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use windlass_server::{ApiKey, RequestLimits};
use windlass_testkit::check::assert_api_error;
use windlass_testkit::db;
use windlass_testkit::live::LiveStream;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

const WAIT: Duration = Duration::from_secs(20);

fn hi() -> Value {
    json!({"model": "m", "input": "hi"})
}

async fn raw_post(gw: &Gateway, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let mut req = gw.client.post(gw.url(path)).body(body.to_owned());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

// ------------------------------------------------------------ browser safety

#[tokio::test]
async fn non_json_and_encoded_bodies_are_415() {
    let gw = Gateway::start().await;
    let body = hi().to_string();
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (s, b) = raw_post(&gw, "/v1/responses", &[("content-type", ct)], &body).await;
        assert_api_error(s, &b, 415);
    }
    let (s, b) = raw_post(&gw, "/v1/responses", &[], &body).await;
    assert_api_error(s, &b, 415);
    let headers = [
        ("content-type", "application/json"),
        ("content-encoding", "gzip"),
    ];
    let (s, b) = raw_post(&gw, "/v1/responses", &headers, &body).await;
    let e = assert_api_error(s, &b, 415);
    assert_eq!(e["code"], "unsupported_content_encoding");
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_loopback() {
    let mut opts = GatewayOptions::default();
    opts.server.allowed_hosts = vec!["gw.internal".to_owned()];
    let gw = Gateway::start_with(opts).await;
    for host in ["evil.example", "evil.example:8080", "192.168.1.9"] {
        let resp = gw
            .client
            .get(gw.url("/v1/models"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 403, "{host}");
    }
    for host in ["localhost:1234", "gw.internal"] {
        let resp = gw
            .client
            .get(gw.url("/health"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{host}");
    }
}

#[tokio::test]
async fn cors_is_off_unless_origins_are_configured() {
    let gw = Gateway::start().await;
    let resp = gw
        .client
        .get(gw.url("/health"))
        .header("origin", "https://site.example")
        .send()
        .await
        .unwrap();
    assert!(resp.headers().get("access-control-allow-origin").is_none());

    let mut opts = GatewayOptions::default();
    opts.server.cors_allowed_origins = vec!["https://app.example".to_owned()];
    let gw = Gateway::start_with(opts).await;
    let preflight = |origin: &'static str| {
        gw.client
            .request(reqwest::Method::OPTIONS, gw.url("/v1/responses"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let ok = preflight("https://app.example").await.unwrap();
    assert_eq!(ok.status().as_u16(), 204);
    assert_eq!(
        ok.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    let other = preflight("https://site.example").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
}

// ---------------------------------------------------------------------- auth

async fn keyed(key: Option<&str>, gw: &Gateway, path: &str) -> u16 {
    let mut req = gw.client.get(gw.url(path));
    if let Some(k) = key {
        req = req.header("authorization", k);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn keys_are_trimmed_the_scheme_is_case_insensitive_and_unknown_routes_need_one() {
    let mut opts = GatewayOptions::default();
    opts.server.api_keys = vec!["k1".to_owned(), " k2".to_owned()];
    opts.server.keys = vec![ApiKey::plain("ci", "sk-ci").unwrap()];
    let gw = Gateway::start_with(opts).await;
    for good in ["Bearer k2", "bearer k1", "BEARER  k2 ", "Bearer sk-ci"] {
        assert_eq!(keyed(Some(good), &gw, "/v1/models").await, 200, "{good}");
    }
    for bad in ["Bearer  k3", "Basic k1", "k1", "Bearer "] {
        assert_eq!(keyed(Some(bad), &gw, "/v1/models").await, 401, "{bad}");
    }
    // Routes cannot be mapped without a key.
    for path in ["/v1/nothing", "/admin", "/v1/responses/x/nothing"] {
        assert_eq!(keyed(None, &gw, path).await, 401, "{path}");
        assert_eq!(keyed(Some("Bearer k1"), &gw, path).await, 404, "{path}");
    }
    assert_eq!(keyed(None, &gw, "/health").await, 200);
    assert_eq!(keyed(None, &gw, "/ready").await, 200);
}

#[tokio::test]
async fn a_blank_key_fails_closed() {
    let mut opts = GatewayOptions::default();
    opts.server.api_keys = vec![String::new(), " ".to_owned()];
    let gw = Gateway::start_with(opts).await;
    assert_eq!(keyed(None, &gw, "/v1/models").await, 401);
    assert_eq!(keyed(Some("Bearer "), &gw, "/v1/models").await, 401);
    assert_eq!(keyed(None, &gw, "/health").await, 200);
}

// -------------------------------------------------------------------- limits

#[tokio::test]
async fn nine_hundred_thousand_items_are_refused_before_any_work() {
    let gw = Gateway::start().await;
    let item = r#"{"role":"user","content":"w"},"#;
    let mut body = String::with_capacity(item.len() * 900_000 + 64);
    body.push_str(r#"{"model":"m","input":["#);
    for _ in 0..900_000 {
        body.push_str(item);
    }
    body.pop();
    body.push_str("]}");
    assert!(body.len() < 32 * 1024 * 1024, "under the body limit");
    let headers = [("content-type", "application/json")];
    let (s, b) = raw_post(&gw, "/v1/responses", &headers, &body).await;
    let e = assert_api_error(s, &b, 400);
    assert_eq!(e["param"], "input");
    assert_eq!(e["code"], "array_above_max_length");
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn every_limit_is_a_400_naming_the_field() {
    let mut opts = GatewayOptions::default();
    opts.server.limits = RequestLimits {
        max_input_items: 2,
        max_content_parts: 2,
        max_tools: 1,
        max_string_bytes: 64,
        ..RequestLimits::default()
    };
    let gw = Gateway::start_with(opts).await;
    let f = json!({"type": "function", "name": "f", "parameters": {}});
    let metadata: serde_json::Map<String, Value> =
        (0..17).map(|i| (format!("k{i}"), json!("v"))).collect();
    for (body, param) in [
        (json!({"model": "m", "input": ["a", "b", "c"]}), "input"),
        (
            json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}, {"type": "input_text", "text": "c"}]}]}),
            "input[0].content",
        ),
        (json!({"model": "m", "input": "x".repeat(65)}), "input"),
        (
            json!({"model": "m", "input": "hi", "tools": [f, f]}),
            "tools",
        ),
        (
            json!({"model": "m", "input": "hi", "metadata": metadata}),
            "metadata",
        ),
    ] {
        let (s, b) = gw.post_json("/v1/responses", &body).await;
        let e = assert_api_error(s, &b, 400);
        assert_eq!(e["param"], param, "{b}");
    }
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn nested_objects_are_checked_by_schema() {
    let gw = Gateway::start().await;
    for (extra, param) in [
        (json!({"text": []}), "text"),
        (json!({"reasoning": {"a": 1}}), "reasoning"),
        (json!({"text": {"verbosity": "low", "colour": 1}}), "text"),
    ] {
        let mut body = hi();
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (s, b) = gw.post_json("/v1/responses", &body).await;
        let e = assert_api_error(s, &b, 400);
        assert_eq!(e["param"], param, "{b}");
    }
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn a_bad_path_id_gets_the_error_shape() {
    let gw = Gateway::start().await;
    for path in ["/v1/responses/%FF%FE", "/v1/responses/%FF/input_items"] {
        let (s, b) = gw.get_json(path).await;
        let e = assert_api_error(s, &b, 400);
        assert_eq!(e["param"], "id");
    }
}

// ------------------------------------------------------------------- secrets

#[tokio::test]
async fn upstream_auth_failures_are_502_without_the_upstream_text() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::error(401, "Incorrect API key provided: sk-up***xyz"));
    let (s, b) = gw.post_json("/v1/responses", &hi()).await;
    let e = assert_api_error(s, &b, 502);
    assert_eq!(e["code"], "upstream_auth_failed");
    assert!(!b.to_string().contains("sk-up"), "{b}");
}

// -------------------------------------------------------------- consistency

#[tokio::test]
async fn a_running_response_cannot_be_continued_and_its_delete_is_kept() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("never").stall());
    let mut live = LiveStream::open(&gw, &hi()).await;
    assert!(live.read_until("response.created", WAIT).await);
    let id = live.response_id();

    let body = json!({"model": "m", "input": "next", "previous_response_id": id});
    let (s, b) = gw.post_json("/v1/responses", &body).await;
    let e = assert_api_error(s, &b, 409);
    assert_eq!(e["param"], "previous_response_id");

    let (s, b) = gw.delete(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["deleted"], true);
    let cap = live.finish(WAIT).await;
    assert!(
        cap.raw.contains("response.cancelled") || cap.raw.contains("\"cancelled\""),
        "{}",
        cap.raw
    );
    // Gone for good: the run's own save came before the delete.
    let (s, _) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 404);
    assert_eq!(db::stored_response_count(&gw), Some(0));
}

// -------------------------------------------------------------- connections

#[tokio::test]
async fn two_thousand_half_open_connections_do_not_stop_health() {
    let mut opts = GatewayOptions::default();
    opts.server.connections.max_connections = 500;
    let gw = Gateway::start_with(opts).await;
    let addr = gw.base.trim_start_matches("http://").to_owned();
    let mut stalled = Vec::new();
    for _ in 0..2000 {
        let mut tcp = TcpStream::connect(&addr).await.expect("connect");
        tcp.write_all(b"GET /he")
            .await
            .expect("half a request line");
        stalled.push(tcp);
    }
    // A fresh client (new connection) still gets the probes...
    let client = reqwest::Client::new();
    for path in ["/health", "/ready"] {
        let resp = client.get(gw.url(path)).send().await.expect("probe");
        assert_eq!(resp.status().as_u16(), 200, "{path}");
    }
    // ...and is told to come back for anything else.
    let resp = client
        .post(gw.url("/v1/responses"))
        .json(&hi())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    assert!(resp.headers().contains_key("retry-after"));
    drop(stalled);
}

#[tokio::test]
async fn a_slow_body_is_408_and_idle_connections_are_closed() {
    let mut opts = GatewayOptions::default();
    opts.server.connections.body_read_timeout = Duration::from_millis(300);
    opts.server.connections.header_read_timeout = Duration::from_millis(300);
    let gw = Gateway::start_with(opts).await;
    let addr = gw.base.trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(
        b"POST /v1/responses HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"model\"",
    )
    .await
    .unwrap();
    let mut answer = String::new();
    let _ = tokio::time::timeout(WAIT, tcp.read_to_string(&mut answer)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");

    // Half a request line, then silence: the server hangs up.
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    tcp.write_all(b"GET /he").await.unwrap();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(WAIT, tcp.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "connection still open");
}

#[tokio::test]
async fn creates_past_the_inflight_cap_are_503_with_retry_after() {
    let mut opts = GatewayOptions::default();
    opts.server.connections.max_inflight_responses = 1;
    let gw = Gateway::start_with(opts).await;
    gw.upstream.push(Reply::text("never").stall());
    let mut live = LiveStream::open(&gw, &hi()).await;
    assert!(live.read_until("response.created", WAIT).await);
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&hi())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let id = live.response_id();
    let (s, _) = gw
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(s, 200);
}

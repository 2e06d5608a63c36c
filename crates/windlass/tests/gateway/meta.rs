//! Foundation acceptance: `/v1/models`, health and readiness, unknown routes,
//! API-key authentication.

use serde_json::{json, Value};
use windlass_testkit::check::{assert_api_error, assert_error_shape};
use windlass_testkit::{Gateway, GatewayOptions, Reply};

#[tokio::test]
async fn models_are_proxied_from_the_upstream() {
    let gw = Gateway::start().await;
    gw.upstream
        .set_models(vec!["qwen3-8b".to_owned(), "llama-3.1-70b".to_owned()]);
    let (s, b) = gw.get_json("/v1/models").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["object"], "list");
    let data = b["data"].as_array().expect("data");
    let ids: Vec<_> = data.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["qwen3-8b", "llama-3.1-70b"]);
    for m in data {
        assert_eq!(m["object"], "model");
        assert!(m["created"].is_u64(), "{m}");
        assert!(m["owned_by"].is_string(), "{m}");
    }
    // Not a canned answer: a change upstream shows at once.
    gw.upstream.set_models(vec!["other".to_owned()]);
    let (_, b) = gw.get_json("/v1/models").await;
    assert_eq!(b["data"][0]["id"], "other");
    assert_eq!(b["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn models_with_the_upstream_down_is_502_in_error_shape() {
    let gw = Gateway::start().await;
    gw.upstream.clone().shutdown().await;
    let (s, b) = gw.get_json("/v1/models").await;
    let e = assert_api_error(s, &b, 502);
    assert_eq!(e["type"], "server_error");
}

#[tokio::test]
async fn health_and_ready_are_200() {
    let gw = Gateway::start().await;
    let (s, b) = gw.get_json("/health").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "ok");
    let (s, b) = gw.get_json("/ready").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "ready");
}

#[tokio::test]
async fn unknown_routes_are_404_in_error_shape() {
    let gw = Gateway::start().await;
    for path in ["/nope", "/v1/nope", "/v1/responses/x/y/z", "/v2/responses"] {
        let (s, b) = gw.get_json(path).await;
        let e = assert_api_error(s, &b, 404);
        assert_eq!(e["type"], "invalid_request_error", "{path}: {b}");
    }
    let (s, b) = gw.post_json("/v1/chat/nothing", &json!({})).await;
    assert_api_error(s, &b, 404);
    assert_eq!(gw.upstream.request_count(), 0);
}

#[tokio::test]
async fn wrong_method_is_405_in_error_shape() {
    let gw = Gateway::start().await;
    // GET /v1/responses is WebSocket mode: without the upgrade it is a 400
    // saying so (websocket.rs); other methods are 405.
    let resp = gw
        .client
        .patch(gw.url("/v1/responses"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    let b: Value = resp.json().await.expect("405 body is not JSON");
    assert_error_shape(&b);
    let resp = gw
        .client
        .put(gw.url("/v1/responses/resp_x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    let b: Value = resp.json().await.expect("405 body is not JSON");
    assert_error_shape(&b);
}

// -------------------------------------------------------------------- auth

async fn authed_gateway() -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.server.api_keys = vec!["sk-right".to_owned(), "sk-second".to_owned()];
    Gateway::start_with(opts).await
}

async fn post_with_key(gw: &Gateway, key: Option<&str>, body: &Value) -> (u16, Value) {
    let mut req = gw.client.post(gw.url("/v1/responses")).json(body);
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    let resp = req.send().await.unwrap();
    let s = resp.status().as_u16();
    (s, resp.json().await.unwrap_or(Value::Null))
}

async fn get_with_key(gw: &Gateway, path: &str, key: Option<&str>) -> (u16, Value) {
    let mut req = gw.client.get(gw.url(path));
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    let resp = req.send().await.unwrap();
    let s = resp.status().as_u16();
    (s, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn api_key_is_required_when_configured() {
    let gw = authed_gateway().await;
    let body = json!({"model": "m", "input": "hi"});

    let (s, b) = post_with_key(&gw, None, &body).await;
    let e = assert_api_error(s, &b, 401);
    assert_eq!(e["code"], "invalid_api_key");
    let (s, b) = post_with_key(&gw, Some("sk-wrong"), &body).await;
    assert_api_error(s, &b, 401);
    // A raw key without the Bearer scheme is refused too.
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .header("authorization", "sk-right")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // Nothing reached the upstream.
    assert_eq!(gw.upstream.request_count(), 0);

    gw.upstream.push(Reply::text("welcome"));
    let (s, r) = post_with_key(&gw, Some("sk-right"), &body).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "completed");
    gw.upstream.push(Reply::text("welcome"));
    let (s, _) = post_with_key(&gw, Some("sk-second"), &body).await;
    assert_eq!(s, 200);

    // Every /v1 route is protected.
    let id = r["id"].as_str().unwrap();
    for path in [
        "/v1/models".to_owned(),
        format!("/v1/responses/{id}"),
        format!("/v1/responses/{id}/input_items"),
    ] {
        let (s, b) = get_with_key(&gw, &path, None).await;
        assert_api_error(s, &b, 401);
        let (s, b) = get_with_key(&gw, &path, Some("sk-wrong")).await;
        assert_api_error(s, &b, 401);
        let (s, b) = get_with_key(&gw, &path, Some("sk-right")).await;
        assert_eq!(s, 200, "{path}: {b}");
    }
    let resp = gw
        .client
        .delete(gw.url(&format!("/v1/responses/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let resp = gw
        .client
        .post(gw.url(&format!("/v1/responses/{id}/cancel")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // The unauthorised DELETE did not delete.
    let (s, _) = get_with_key(&gw, &format!("/v1/responses/{id}"), Some("sk-right")).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn health_and_ready_stay_open_with_api_keys() {
    let gw = authed_gateway().await;
    let (s, _) = gw.get_json("/health").await;
    assert_eq!(s, 200);
    let (s, _) = gw.get_json("/ready").await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn streaming_requires_the_key_too() {
    let gw = authed_gateway().await;
    let body = json!({"model": "m", "input": "hi", "stream": true});
    let (s, b) = post_with_key(&gw, None, &body).await;
    assert_api_error(s, &b, 401);
    gw.upstream.push(Reply::text("streamed"));
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .header("authorization", "Bearer sk-right")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let text = resp.text().await.unwrap();
    assert!(text.contains("event: response.completed"), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"));
}

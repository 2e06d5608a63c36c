//! Foundation acceptance: bad input is refused with an OpenAI-shaped 4xx and
//! changes nothing; upstream faults end `failed` with the right status;
//! client disconnects and the cancel endpoint stop the upstream call and end
//! `cancelled`.

use std::time::Duration;

use serde_json::{json, Value};
use windlass_testkit::check::{assert_api_error, assert_error_shape};
use windlass_testkit::db::{assert_db_empty, item_stored, stored_statuses, wait_db_status};
use windlass_testkit::live::{wait_for_status, LiveStream};
use windlass_testkit::{Gateway, GatewayOptions, Reply, ToolCallSpec};

const SHORT: Duration = Duration::from_millis(300);
const WAIT: Duration = Duration::from_secs(5);

async fn gateway_with_timeouts(first_byte: Duration, idle: Duration) -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.provider.first_byte_timeout = first_byte;
    opts.provider.idle_timeout = idle;
    Gateway::start_with(opts).await
}

/// Asserts that a refused request reached nothing: no upstream call, no
/// stored response or item, nothing left running.
async fn assert_untouched(gw: &Gateway, what: &str) {
    assert_eq!(
        gw.upstream.request_count(),
        0,
        "{what}: the upstream was called"
    );
    assert_db_empty(gw, what);
    assert!(
        !item_stored(gw, "msg_probe_refused").await,
        "{what}: input stored"
    );
    assert!(gw.state.inflight.is_empty(), "{what}: still in flight");
}

/// A user message with a known id, to check it was not stored.
fn probe() -> Value {
    json!({"type": "message", "id": "msg_probe_refused", "role": "user", "content": "hi"})
}

/// Sends `body` as JSON, then as a stream: both must be refused the same way
/// (no SSE stream is started for a bad request).
async fn refused_both_ways(gw: &Gateway, body: Value, status: u16) -> Value {
    let (s, b) = gw.post_json("/v1/responses", &body).await;
    let err = assert_api_error(s, &b, status);
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&streamed)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), status, "stream: status");
    let ct = resp
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        ct.starts_with("application/json"),
        "stream: content-type {ct}"
    );
    let sb: Value = resp.json().await.unwrap();
    let serr = assert_error_shape(&sb);
    for k in ["type", "param", "code"] {
        assert_eq!(serr[k], err[k], "stream and JSON errors differ in {k}");
    }
    err
}

// ------------------------------------------------------------- bad input

#[tokio::test]
async fn malformed_json_is_400() {
    let gw = Gateway::start().await;
    for raw in [
        r#"{"model": "m", "input": "#,
        r#"{"model": "m" "input": "hi"}"#,
        "",
        "not json at all",
    ] {
        let (s, b) = gw.post_raw("/v1/responses", raw.to_owned()).await;
        let e = assert_api_error(s, &b, 400);
        assert_eq!(e["type"], "invalid_request_error", "{raw}: {b}");
    }
    // Valid JSON but not an object.
    let (s, b) = gw.post_raw("/v1/responses", "[1, 2]").await;
    assert_api_error(s, &b, 400);
    assert_untouched(&gw, "malformed JSON").await;
}

#[tokio::test]
async fn wrong_types_are_400() {
    let gw = Gateway::start().await;
    for body in [
        json!({"model": "m", "input": 5}),
        json!({"model": "m", "input": [probe()], "temperature": "hot"}),
        json!({"model": 7, "input": [probe()]}),
        json!({"model": "m", "input": [probe()], "tools": "all of them"}),
        json!({"model": "m", "input": [probe()], "store": "yes"}),
        json!({"model": "m", "input": [probe()], "max_output_tokens": -1}),
        json!({"model": "m", "input": [{"type": "message", "role": "user", "content": 5}]}),
    ] {
        let err = refused_both_ways(&gw, body.clone(), 400).await;
        assert_eq!(err["type"], "invalid_request_error", "{body}: {err}");
    }
    assert_untouched(&gw, "wrong types").await;
}

#[tokio::test]
async fn wrong_types_name_the_field() {
    let gw = Gateway::start().await;
    for (body, field) in [
        (
            json!({"model": "m", "input": "hi", "temperature": "hot"}),
            "temperature",
        ),
        (json!({"model": "m", "input": 5}), "input"),
    ] {
        let (s, b) = gw.post_json("/v1/responses", &body).await;
        let e = assert_api_error(s, &b, 400);
        assert_eq!(e["param"], field, "{b}");
    }
}

#[tokio::test]
async fn unknown_top_level_parameter_is_400_naming_it() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe()], "frobnicate": true}),
        400,
    )
    .await;
    assert_eq!(err["param"], "frobnicate", "{err}");
    assert!(err["message"].as_str().unwrap().contains("frobnicate"));
    assert_untouched(&gw, "unknown parameter").await;
}

#[tokio::test]
async fn unknown_previous_response_id_is_400() {
    let gw = Gateway::start().await;
    // OpenAI's status for it (another tenant's id gets the same).
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe()], "previous_response_id": "resp_nope"}),
        400,
    )
    .await;
    assert_eq!(err["param"], "previous_response_id", "{err}");
    assert_eq!(err["type"], "invalid_request_error");
    assert_untouched(&gw, "unknown previous_response_id").await;
}

#[tokio::test]
async fn oversized_body_is_413() {
    let mut opts = GatewayOptions::default();
    opts.server.max_body_bytes = 2048;
    let gw = Gateway::start_with(opts).await;
    let big = "x".repeat(8 * 1024);
    let body = json!({"model": "m", "input": [
        {"type": "message", "id": "msg_probe_refused", "role": "user", "content": big}]});
    let (s, b) = gw.post_json("/v1/responses", &body).await;
    let e = assert_api_error(s, &b, 413);
    assert_eq!(e["type"], "invalid_request_error");
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let (s, b) = gw.post_json("/v1/responses", &streamed).await;
    assert_api_error(s, &b, 413);
    assert_untouched(&gw, "oversized body").await;
    // Under the limit is fine.
    gw.upstream.push(Reply::text("ok"));
    let (s, b) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "small"}))
        .await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn string_and_array_content_are_both_accepted() {
    let gw = Gateway::start().await;
    let forms = [
        json!("hi"),
        json!([{"role": "user", "content": "hi"}]),
        json!([{"type": "message", "role": "user", "content": "hi"}]),
        json!([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]),
        json!([{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "h"}, {"type": "input_text", "text": "i"}]}]),
    ];
    for input in forms {
        gw.upstream.push(Reply::text("ok"));
        let (s, r) = gw
            .post_json("/v1/responses", &json!({"model": "m", "input": input}))
            .await;
        assert_eq!(s, 200, "{input}: {r}");
        assert_eq!(r["status"], "completed");
        let sent = gw.upstream.last_request().unwrap();
        let msgs = sent["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 1, "{sent}");
        assert_eq!(msgs[0]["role"], "user");
        assert_eq!(msgs[0]["content"], "hi", "{input}: {sent}");
    }
}

#[tokio::test]
async fn unknown_item_and_content_types_are_400() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe(), {"type": "bogus_item", "x": 1}]}),
        400,
    )
    .await;
    assert_eq!(err["param"], "input[1]", "{err}");
    assert!(err["message"].as_str().unwrap().contains("bogus_item"));
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe(), {"role": "user",
            "content": [{"type": "input_hologram", "data": "x"}]}]}),
        400,
    )
    .await;
    assert!(
        err["message"].as_str().unwrap().contains("input_hologram"),
        "{err}"
    );
    assert_untouched(&gw, "unknown item type").await;
}

#[tokio::test]
async fn function_call_output_with_unknown_call_id_is_400() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe(),
            {"type": "function_call_output", "call_id": "call_ghost", "output": "5"}]}),
        400,
    )
    .await;
    assert_eq!(err["param"], "input[1].call_id", "{err}");
    assert!(err["message"].as_str().unwrap().contains("call_ghost"));
    assert_untouched(&gw, "unknown call_id").await;

    // Also when continuing a response whose call has a different id.
    gw.upstream.push(Reply::tool_calls([
        ToolCallSpec::new("f", "{}").id("call_real")
    ]));
    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "go",
                    "tools": [{"type": "function", "name": "f"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    let before = stored_statuses(&gw).map(|v| v.len());
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "previous_response_id": r1["id"],
               "input": [{"type": "function_call_output", "call_id": "call_other", "output": "5"}]}),
        400,
    )
    .await;
    assert_eq!(err["param"], "input[0].call_id");
    assert_eq!(gw.upstream.request_count(), 1);
    assert_eq!(stored_statuses(&gw).map(|v| v.len()), before);
}

#[tokio::test]
async fn tool_choice_naming_a_missing_tool_is_400() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe()],
               "tools": [{"type": "function", "name": "real_tool"}],
               "tool_choice": {"type": "function", "name": "ghost_tool"}}),
        400,
    )
    .await;
    assert!(
        err["param"]
            .as_str()
            .unwrap_or_default()
            .starts_with("tool_choice"),
        "{err}"
    );
    assert!(err["message"].as_str().unwrap().contains("ghost_tool"));
    assert_untouched(&gw, "tool_choice missing tool").await;
}

#[tokio::test]
async fn background_without_store_is_400() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe()], "background": true, "store": false}),
        400,
    )
    .await;
    assert_eq!(err["param"], "background", "{err}");
    assert_untouched(&gw, "background").await;
}

#[tokio::test]
async fn sampling_parameters_out_of_range_are_400() {
    let gw = Gateway::start().await;
    for (field, value) in [
        ("temperature", json!(2.5)),
        ("temperature", json!(-0.1)),
        ("top_p", json!(1.5)),
        ("presence_penalty", json!(3)),
        ("max_output_tokens", json!(0)),
    ] {
        let mut body = json!({"model": "m", "input": [probe()]});
        body[field] = value.clone();
        let err = refused_both_ways(&gw, body, 400).await;
        assert_eq!(err["param"], field, "{field}={value}: {err}");
    }
    assert_untouched(&gw, "out of range").await;
}

#[tokio::test]
async fn missing_model_or_input_is_400() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(&gw, json!({"input": [probe()]}), 400).await;
    assert_eq!(err["param"], "model", "{err}");
    let err = refused_both_ways(&gw, json!({"model": "", "input": [probe()]}), 400).await;
    assert_eq!(err["param"], "model", "{err}");
    let err = refused_both_ways(&gw, json!({"model": "m"}), 400).await;
    assert_eq!(err["param"], "input", "{err}");
    assert_untouched(&gw, "missing model / input").await;
}

// --------------------------------------------------------- upstream faults

#[tokio::test]
async fn upstream_down_json_is_502_and_stored_failed() {
    let gw = Gateway::start().await;
    gw.upstream.clone().shutdown().await;
    let (s, b) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": [{"type": "message", "id": "msg_probe_down",
                    "role": "user", "content": "hi"}]}),
        )
        .await;
    let e = assert_api_error(s, &b, 502);
    assert_eq!(e["type"], "server_error");
    assert!(e["code"].is_string(), "{b}");
    // The run was persisted (its input is stored) and it ended `failed`.
    assert!(item_stored(&gw, "msg_probe_down").await);
    if let Some((_, status, code)) = wait_db_status(&gw, "failed", WAIT).await {
        assert_eq!(status, "failed");
        assert_eq!(code, e["code"].as_str().unwrap());
    }
}

#[tokio::test]
async fn upstream_down_sse_ends_failed_and_is_stored() {
    let gw = Gateway::start().await;
    gw.upstream.clone().shutdown().await;
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.failed");
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed");
    assert!(fin["error"]["code"].is_string(), "{fin}");
    assert!(fin["error"]["message"].is_string(), "{fin}");
    let (s, got) = gw
        .get_json(&format!("/v1/responses/{}", fin["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 200);
    assert_eq!(got["status"], "failed");
    assert_eq!(got["error"], fin["error"]);
}

#[tokio::test]
async fn upstream_500_is_502() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::error(500, "model exploded"));
    let (s, b) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    let e = assert_api_error(s, &b, 502);
    assert_eq!(e["type"], "server_error");
    assert!(
        e["message"].as_str().unwrap().contains("model exploded"),
        "{b}"
    );
    gw.upstream.push(Reply::error(500, "model exploded"));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed");
    assert_eq!(fin["error"]["code"], e["code"]);
    if let Some(rows) = stored_statuses(&gw) {
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().all(|r| r.1 == "failed"), "{rows:?}");
    }
}

#[tokio::test]
async fn upstream_429_is_429() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::error(429, "slow down"));
    let (s, b) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    let e = assert_api_error(s, &b, 429);
    assert_eq!(e["type"], "rate_limit_error");
    gw.upstream.push(Reply::error(429, "slow down"));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(cap.final_response()["status"], "failed");
    assert_eq!(cap.final_response()["error"]["code"], e["code"]);
}

#[tokio::test]
async fn stall_before_first_byte_is_504() {
    let gw = gateway_with_timeouts(SHORT, WAIT).await;
    gw.upstream.push(Reply::text("never").stall());
    let (s, b) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    let e = assert_api_error(s, &b, 504);
    assert_eq!(e["type"], "server_error");
    // The stalled upstream request was abandoned.
    assert!(gw.upstream.wait_for_disconnects(1, WAIT).await);

    gw.upstream.push(Reply::text("never").stall());
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.failed");
    let fin = cap.final_response();
    assert_eq!(fin["error"]["code"], e["code"]);
    assert_eq!(fin["output"], json!([]));
    assert!(gw.upstream.wait_for_disconnects(2, WAIT).await);
}

#[tokio::test]
async fn stall_mid_stream_hits_idle_timeout_with_items_closed() {
    let gw = gateway_with_timeouts(WAIT, SHORT).await;
    gw.upstream.push(
        Reply::text("Hello there, how are you")
            .reasoning("thinking")
            .chunk_chars(4)
            .stall_after(5),
    );
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.failed");
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed");
    assert!(fin["error"]["code"].is_string(), "{fin}");
    // Partial output is kept, closed, and not marked completed.
    let out = fin["output"].as_array().unwrap();
    assert!(!out.is_empty(), "{fin}");
    for item in out {
        assert_ne!(item["status"], "in_progress", "{item}");
    }
    assert_eq!(out.last().unwrap()["status"], "incomplete", "{fin}");
    assert!(gw.upstream.wait_for_disconnects(1, WAIT).await);
    let (s, got) = gw
        .get_json(&format!("/v1/responses/{}", fin["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 200);
    assert_eq!(&got, fin);
}

#[tokio::test]
async fn cut_mid_stream_ends_failed_and_is_stored_failed() {
    let gw = Gateway::start().await;
    gw.upstream.push(
        Reply::text("Hello there, how are you")
            .chunk_chars(4)
            .cut_after(3),
    );
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.failed");
    let fin = cap.final_response();
    assert_eq!(fin["output"][0]["status"], "incomplete", "{fin}");
    let (s, got) = gw
        .get_json(&format!("/v1/responses/{}", fin["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 200);
    assert_eq!(got["status"], "failed");
    assert!(
        got["error"]["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{got}"
    );
    assert!(got["error"]["message"].is_string(), "{got}");
}

#[tokio::test]
async fn in_stream_error_event_ends_failed() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("Hello there").error_event_after(2, "CUDA out of memory"));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed", "{fin}");
    assert!(
        fin["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("CUDA out of memory"),
        "{fin}"
    );
}

// -------------------------------------------------- disconnect and cancel

fn slow_reply() -> Reply {
    Reply::text("word ".repeat(60))
        .chunk_chars(5)
        .delay_between_chunks(Duration::from_millis(40))
}

#[tokio::test]
async fn client_disconnect_sse_aborts_upstream_and_stores_cancelled() {
    let gw = Gateway::start().await;
    gw.upstream.push(slow_reply());
    let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
    assert_eq!(live.status, 200);
    assert!(
        live.read_until("response.output_text.delta", WAIT).await,
        "{}",
        live.raw
    );
    let id = live.response_id();
    drop(live);
    assert!(
        gw.upstream.wait_for_disconnects(1, WAIT).await,
        "the upstream request was not aborted"
    );
    let got = wait_for_status(&gw, &id, "cancelled", WAIT).await;
    assert!(got["completed_at"].is_u64(), "{got}");
    // The partial message is kept and closed, not left in progress.
    for item in got["output"].as_array().unwrap() {
        assert_ne!(item["status"], "in_progress", "{got}");
    }
    // Well under the ~2.4 s the full reply would take.
    assert_eq!(gw.upstream.request_count(), 1);
}

#[tokio::test]
async fn client_disconnect_json_aborts_upstream_and_stores_cancelled() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("too late").first_byte_delay(Duration::from_secs(10)));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let res = client
        .post(gw.url("/v1/responses"))
        .json(
            &json!({"model": "m", "input": [{"type": "message", "id": "msg_probe_hangup",
                      "role": "user", "content": "hi"}]}),
        )
        .send()
        .await;
    assert!(
        res.is_err(),
        "expected a client timeout, got {:?}",
        res.map(|r| r.status())
    );
    assert!(gw.upstream.wait_for_requests(1, WAIT).await);
    assert!(
        gw.upstream.wait_for_disconnects(1, WAIT).await,
        "the upstream request was not aborted after the client hung up"
    );
    if let Some((_, status, _)) = wait_db_status(&gw, "cancelled", WAIT).await {
        assert_eq!(status, "cancelled");
    }
    assert!(item_stored(&gw, "msg_probe_hangup").await);
}

#[tokio::test]
async fn cancel_endpoint_stops_an_in_flight_stream() {
    let gw = Gateway::start().await;
    gw.upstream.push(slow_reply());
    let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
    assert!(
        live.read_until("response.output_text.delta", WAIT).await,
        "{}",
        live.raw
    );
    let id = live.response_id();
    // While running, GET knows it.
    let (s, running) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "{running}");
    assert_eq!(running["status"], "in_progress");

    let cancel_url = gw.url(&format!("/v1/responses/{id}/cancel"));
    let client = gw.client.clone();
    let cancel = tokio::spawn(async move {
        let resp = client.post(cancel_url).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json::<Value>().await.unwrap())
    });
    let cap = live.finish(WAIT).await;
    let (cs, cbody) = cancel.await.unwrap();

    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.cancelled");
    let fin = cap.final_response();
    assert_eq!(fin["status"], "cancelled");
    assert!(fin["output"].as_array().unwrap().len() <= 1, "{fin}");
    assert_eq!(cs, 200, "{cbody}");
    assert_eq!(cbody["status"], "cancelled");
    assert_eq!(cbody["id"], id);
    assert!(gw.upstream.wait_for_disconnects(1, WAIT).await);
    let (s, got) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(&got, fin);
}

#[tokio::test]
async fn cancel_of_a_finished_response_is_400_and_unknown_404() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("done"));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(s, 200);
    let id = r["id"].as_str().unwrap();
    let (s, b) = gw
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    let e = assert_api_error(s, &b, 400);
    assert_eq!(e["type"], "invalid_request_error");
    // Still completed.
    let (_, got) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(got["status"], "completed");
    let (s, b) = gw
        .post_json("/v1/responses/resp_nobody/cancel", &json!({}))
        .await;
    assert_api_error(s, &b, 404);
}

#[tokio::test]
async fn client_disconnect_sse_during_upstream_prefill_aborts_upstream() {
    // The client hangs up while the upstream has not sent a byte yet (long
    // prefill): no event is being written, yet the upstream call must stop.
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("late").first_byte_delay(Duration::from_secs(8)));
    let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
    assert!(
        live.read_until("response.in_progress", WAIT).await,
        "{}",
        live.raw
    );
    let id = live.response_id();
    assert!(gw.upstream.wait_for_requests(1, WAIT).await);
    drop(live);
    assert!(
        gw.upstream
            .wait_for_disconnects(1, Duration::from_secs(2))
            .await,
        "the upstream request kept running after the SSE client hung up"
    );
    wait_for_status(&gw, &id, "cancelled", WAIT).await;
}

#[tokio::test]
async fn cancel_endpoint_during_upstream_prefill_aborts_upstream() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("late").first_byte_delay(Duration::from_secs(8)));
    let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
    assert!(
        live.read_until("response.in_progress", WAIT).await,
        "{}",
        live.raw
    );
    let id = live.response_id();
    assert!(gw.upstream.wait_for_requests(1, WAIT).await);
    let started = std::time::Instant::now();
    let (s, b) = gw
        .post_json(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "cancelled");
    let cap = live.finish(WAIT).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.cancelled");
    assert!(
        gw.upstream
            .wait_for_disconnects(1, Duration::from_secs(2))
            .await
    );
}

#[tokio::test]
async fn oversized_chunked_body_is_413() {
    let mut opts = GatewayOptions::default();
    opts.server.max_body_bytes = 2048;
    let gw = Gateway::start_with(opts).await;
    let body = serde_json::to_vec(&json!({"model": "m", "input": "x".repeat(8 * 1024)})).unwrap();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        body.chunks(1024).map(|c| Ok(c.to_vec())).collect();
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    let s = resp.status().as_u16();
    let b: Value = resp.json().await.unwrap();
    assert_api_error(s, &b, 413);
    assert_untouched(&gw, "oversized chunked body").await;
}

#[tokio::test]
async fn retryable_upstream_errors_are_retried_before_any_byte() {
    let mut opts = GatewayOptions::default();
    opts.provider.max_retries = 1;
    let gw = Gateway::start_with(opts).await;
    gw.upstream
        .push(Reply::error(503, "loading model").header("retry-after", "0"));
    gw.upstream.push(Reply::text("ready now"));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(gw.upstream.request_count(), 2);
}

#[tokio::test]
async fn timeouts_and_faults_have_distinct_error_codes() {
    let gw = gateway_with_timeouts(SHORT, SHORT).await;
    gw.upstream.push(Reply::text("never").stall());
    gw.upstream.push(Reply::text("abc def ghi").stall_after(2));
    gw.upstream.push(Reply::text("abc def ghi").cut_after(2));
    gw.upstream.push(Reply::error(500, "boom"));
    let mut codes = Vec::new();
    for _ in 0..4 {
        let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
        cap.assert_well_formed();
        let fin = cap.final_response();
        assert_eq!(fin["status"], "failed", "{fin}");
        codes.push(fin["error"]["code"].as_str().unwrap().to_owned());
    }
    // first-byte and idle timeouts are timeouts; a cut and a 500 are not.
    assert_eq!(codes[0], codes[1], "{codes:?}");
    assert!(codes[0].contains("timeout"), "{codes:?}");
    assert_ne!(codes[2], codes[0], "{codes:?}");
    assert_ne!(codes[3], codes[0], "{codes:?}");
}

#[tokio::test]
async fn unknown_item_reference_is_400_and_known_one_resolves() {
    let gw = Gateway::start().await;
    let err = refused_both_ways(
        &gw,
        json!({"model": "m", "input": [probe(), {"type": "item_reference", "id": "msg_ghost"}]}),
        400,
    )
    .await;
    assert!(
        err["message"].as_str().unwrap().contains("msg_ghost"),
        "{err}"
    );
    assert_untouched(&gw, "unknown item_reference").await;

    gw.upstream.push(Reply::text("first"));
    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": [
                {"type": "message", "id": "msg_kept", "role": "user", "content": "remember me"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    gw.upstream.push(Reply::text("second"));
    let (s, r2) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": [{"type": "item_reference", "id": "msg_kept"},
                                            {"role": "user", "content": "now"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r2}");
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(sent["messages"][0]["content"], "remember me", "{sent}");
    assert_eq!(sent["messages"][1]["content"], "now");
}

#[tokio::test]
async fn invalid_metadata_and_tools_are_400() {
    let gw = Gateway::start().await;
    let mut meta = serde_json::Map::new();
    for i in 0..17 {
        meta.insert(format!("k{i}"), json!("v"));
    }
    for (body, param) in [
        (
            json!({"model": "m", "input": [probe()], "metadata": meta}),
            "metadata",
        ),
        (
            json!({"model": "m", "input": [probe()], "metadata": {"k": 5}}),
            "metadata",
        ),
        (
            json!({"model": "m", "input": [probe()],
                   "tools": [{"type": "function", "name": "bad name!"}]}),
            "tools[0].name",
        ),
        (
            json!({"model": "m", "input": [probe()],
                   "tools": [{"type": "function", "name": "f"}, {"type": "function", "name": "f"}]}),
            "tools[1].name",
        ),
        (
            json!({"model": "m", "input": [probe()], "tools": [{"type": "teleporter"}]}),
            "tools[0].type",
        ),
        (
            json!({"model": "m", "input": [probe()], "tool_choice": "required"}),
            "tool_choice",
        ),
        (
            json!({"model": "m", "input": [probe()],
                   "context_management": [{"type": "summarize"}]}),
            "context_management[0].type",
        ),
    ] {
        let err = refused_both_ways(&gw, body.clone(), 400).await;
        assert_eq!(err["param"], param, "{body}: {err}");
    }
    assert_untouched(&gw, "invalid metadata / tools").await;
}

//! How a response that pauses for the client ends: `completed` by default
//! (OpenAI's behaviour), `requires_action` when the server or the request
//! (header `X-Windlass-Client-Tools-Status`) opts in; JSON and SSE.

use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply, SseCapture};

const HEADER: &str = "X-Windlass-Client-Tools-Status";

fn body(mode: Mode) -> Value {
    json!({"model": "m", "input": "Weather?", "tools": funcs(&["get_weather"]),
           "stream": mode == Mode::Sse})
}

/// Creates with the header; returns the final response and the terminal event.
async fn create_with(gw: &Gateway, mode: Mode, value: &str) -> (Value, Option<String>) {
    let (status, content_type, raw) = gw.create_with_header(&body(mode), HEADER, value).await;
    assert_eq!(status, 200, "{raw}");
    match mode {
        Mode::Json => (serde_json::from_str(&raw).unwrap(), None),
        Mode::Sse => {
            let cap = SseCapture::parse(status, content_type, raw);
            cap.assert_well_formed();
            (cap.final_response().clone(), Some(terminal(&cap)))
        }
    }
}

#[tokio::test]
async fn by_default_a_client_call_ends_completed() {
    for mode in MODES {
        let gw = Gateway::start().await;
        gw.upstream
            .push(Reply::tool_call("get_weather", "{}").with_call_id("call_d"));
        let run = create(&gw, mode, &body(mode)).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["function_call"]);
        assert_eq!(output(&run.resp)[0]["call_id"], "call_d");
        if let Some(cap) = &run.sse {
            assert_eq!(terminal(cap), "response.completed");
        }
    }
}

#[tokio::test]
async fn the_header_opts_in_to_requires_action_per_request() {
    for mode in MODES {
        let gw = Gateway::start().await;
        gw.upstream
            .push(Reply::tool_call("get_weather", "{}").with_call_id("call_h"));
        let (resp, term) = create_with(&gw, mode, "requires_action").await;
        assert_eq!(resp["status"], "requires_action", "{mode:?}: {resp}");
        if let Some(t) = term {
            assert_eq!(t, "response.requires_action");
        }
        let id = resp["id"].as_str().unwrap();
        let (_, stored) = gw.get_json(&format!("/v1/responses/{id}")).await;
        assert_eq!(stored["status"], "requires_action");
    }
}

#[tokio::test]
async fn the_header_overrides_a_requires_action_server() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        gw.upstream
            .push(Reply::tool_call("get_weather", "{}").with_call_id("call_s"));
        let (resp, term) = create_with(&gw, mode, "completed").await;
        assert_eq!(resp["status"], "completed", "{mode:?}: {resp}");
        if let Some(t) = term {
            assert_eq!(t, "response.completed");
        }
    }
}

#[tokio::test]
async fn a_bad_header_value_is_a_400_and_changes_nothing() {
    let gw = Gateway::start().await;
    let (status, _, raw) = gw
        .create_with_header(&body(Mode::Json), HEADER, "later")
        .await;
    assert_eq!(status, 400, "{raw}");
    let err: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert_eq!(err["error"]["param"], HEADER);
    assert_eq!(gw.upstream.request_count(), 0);
}

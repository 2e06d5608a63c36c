//! End-to-end smoke: a real server, a SQLite file, the scripted upstream.

use serde_json::json;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

#[tokio::test]
async fn text_json_and_sse_are_stored_and_chained() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("Hello Alice").usage(10, 3));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "My name is Alice"}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(r["output"][0]["content"][0]["text"], "Hello Alice");
    assert_eq!(r["usage"]["total_tokens"], 13);

    gw.upstream
        .push(Reply::text("Your name is Alice").chunk_chars(3));
    let cap = gw
        .stream(
            &json!({"model": "m", "input": "What is my name?", "previous_response_id": r["id"]}),
        )
        .await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    assert_eq!(fin["status"], "completed");
    assert_eq!(fin["output"][0]["content"][0]["text"], "Your name is Alice");
    let sent = gw.upstream.last_request().unwrap();
    let msgs = sent["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{sent}");
    assert_eq!(msgs[1]["content"], "Hello Alice");

    let (s, got) = gw
        .get_json(&format!("/v1/responses/{}", fin["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 200);
    assert_eq!(&got, fin);
}

#[tokio::test]
async fn server_side_tools_loop_in_one_stream() {
    let mock = MockExecutor::new().tool("add", MockBehavior::Ok("42".into()));
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        ..Default::default()
    })
    .await;
    gw.upstream.push(Reply::tool_calls(vec![
        ToolCallSpec::new("add", r#"{"a":17,"b":25}"#),
        ToolCallSpec::new("add", r#"{"a":1,"b":2}"#),
    ]));
    gw.upstream.push(Reply::text("17 + 25 = 42"));
    let cap = gw
        .stream(&json!({
            "model": "m",
            "input": "What is 17 + 25?",
            "tools": [{"type": "function", "name": "add", "parameters": {"type": "object"}}]
        }))
        .await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    let types: Vec<_> = fin["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(mock.calls().len(), 2);
    let second = &gw.upstream.requests()[1];
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["content"], "42");
}

#[tokio::test]
async fn input_the_upstream_cannot_carry_is_a_400_that_writes_nothing() {
    let gw = Gateway::start().await;
    let body = json!({
        "model": "m",
        "stream": true,
        "input": [{"role": "user", "content": [{"type": "input_video", "video_url": "https://x/v.mp4"}]}]
    });
    let (status, err) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert_eq!(err["error"]["code"], "unsupported_for_upstream");
    assert_eq!(gw.upstream.request_count(), 0);
}

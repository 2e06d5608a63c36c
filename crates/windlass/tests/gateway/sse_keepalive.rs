//! SSE keep-alives: while the run sends nothing (here a slow upstream), the
//! stream carries `: keep-alive` comment lines, each a frame of its own, and
//! stays a well-formed stream; `0` turns them off.

use std::time::Duration;

use serde_json::json;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

async fn gateway(keepalive: Option<Duration>) -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.server.sse_keepalive = keepalive;
    let gw = Gateway::start_with(opts).await;
    // Three seconds of silence before the first token.
    gw.upstream
        .push(Reply::text("late answer").first_byte_delay(Duration::from_secs(3)));
    gw
}

#[tokio::test]
async fn silence_is_filled_with_comment_lines() {
    let gw = gateway(Some(Duration::from_secs(1))).await;
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.completed");
    let comments = cap.raw.matches(": keep-alive\n\n").count();
    assert!(comments >= 1, "no keep-alive in {}", cap.raw);
    // Each one is a block of its own, between events, never inside one.
    for block in cap.raw.split("\n\n").filter(|b| b.contains("keep-alive")) {
        assert_eq!(block, ": keep-alive");
    }
    // They came while waiting for the model, after the response was created.
    let first = cap.raw.find(": keep-alive").unwrap();
    assert!(cap.raw[..first].contains("event: response.created"));
    assert!(!cap.raw[..first].contains("event: response.output_text.delta"));
}

#[tokio::test]
async fn zero_turns_them_off() {
    let gw = gateway(None).await;
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert!(!cap.raw.contains("keep-alive"), "{}", cap.raw);
}

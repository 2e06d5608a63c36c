//! Slow model servers: the default upstream timeouts wait as long as the
//! OpenAI SDKs do (ten minutes), a stream stays alive with `: keep-alive`
//! comments while the model prefills, and a stalled upstream still ends
//! within the bound the operator sets (first-byte timeout, or the
//! response's time budget). The scripted upstream is made slow with its
//! first-byte delay; nothing here asserts a duration, only how each request
//! ends.

use std::time::Duration;

use serde_json::json;
use windlass_providers::{ChatProviderConfig, DEFAULT_UPSTREAM_TIMEOUT};
use windlass_testkit::{Gateway, GatewayOptions, Reply};

/// A gateway with the shipped upstream timeouts and a one-second SSE
/// keep-alive (the shipped one is 15 s; shorter keeps the test short).
async fn gateway_with_default_timeouts() -> Gateway {
    let mut opts = GatewayOptions::default();
    let defaults = ChatProviderConfig::default();
    opts.provider.first_byte_timeout = defaults.first_byte_timeout;
    opts.provider.idle_timeout = defaults.idle_timeout;
    opts.server.sse_keepalive = Some(Duration::from_secs(1));
    Gateway::start_with(opts).await
}

#[test]
fn the_default_timeouts_are_the_sdks_ten_minutes() {
    let defaults = ChatProviderConfig::default();
    assert_eq!(DEFAULT_UPSTREAM_TIMEOUT, Duration::from_secs(600));
    assert_eq!(defaults.first_byte_timeout, DEFAULT_UPSTREAM_TIMEOUT);
    assert_eq!(defaults.idle_timeout, DEFAULT_UPSTREAM_TIMEOUT);
}

#[tokio::test]
async fn a_slow_first_byte_is_waited_for_and_the_stream_kept_alive() {
    let gw = gateway_with_default_timeouts().await;
    // A model that prefills for a while before its first token.
    let slow = || Reply::text("late but complete").first_byte_delay(Duration::from_millis(2500));

    gw.upstream.push(slow());
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.completed");
    assert!(
        cap.raw.contains(": keep-alive\n\n"),
        "no keep-alive while the model was silent: {}",
        cap.raw
    );
    assert_eq!(
        cap.final_response()["output"][0]["content"][0]["text"],
        "late but complete"
    );

    gw.upstream.push(slow());
    let (status, body) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "completed", "{body}");
}

#[tokio::test]
async fn a_stalled_upstream_ends_at_the_operators_first_byte_bound() {
    let mut opts = GatewayOptions::default();
    opts.provider.first_byte_timeout = Duration::from_millis(400);
    opts.server.sse_keepalive = Some(Duration::from_secs(1));
    let gw = Gateway::start_with(opts).await;

    gw.upstream.push(Reply::text("never").stall());
    let (status, body) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 504, "{body}");

    gw.upstream.push(Reply::text("never").stall());
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.failed");
    assert_eq!(cap.final_response()["error"]["code"], body["error"]["code"]);
}

#[tokio::test]
async fn a_stalled_upstream_ends_within_the_response_time_budget() {
    // Default (ten-minute) upstream timeouts; the operator's budget for a
    // whole response is what ends the wait.
    let mut opts = GatewayOptions::default();
    let defaults = ChatProviderConfig::default();
    opts.provider.first_byte_timeout = defaults.first_byte_timeout;
    opts.provider.idle_timeout = defaults.idle_timeout;
    opts.engine.max_response_time = Some(Duration::from_millis(500));
    let gw = Gateway::start_with(opts).await;

    gw.upstream.push(Reply::text("never").stall());
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.incomplete");
    let fin = cap.final_response();
    assert_eq!(fin["incomplete_details"]["reason"], "max_response_time");
    assert!(
        gw.upstream
            .wait_for_disconnects(1, Duration::from_secs(5))
            .await
    );

    gw.upstream.push(Reply::text("never").stall());
    let (status, body) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "incomplete", "{body}");
}

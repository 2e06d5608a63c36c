//! Keep-alives on every stream of a background run: a resumed stream
//! (`GET /v1/responses/{id}?stream=true&starting_after=N`) and the stream a
//! `background: true, stream: true` create returns send the same
//! `: keep-alive` comments as a live stream while the run sends nothing
//! (here: a slow upstream), and still end with the terminal event and
//! `[DONE]`.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use windlass_testkit::{Gateway, GatewayOptions, Reply};

/// A short interval, so a slow upstream of a second spans several.
const EVERY: Duration = Duration::from_millis(50);
const SLOW: Duration = Duration::from_millis(1200);

async fn gateway(keep_alive: Option<Duration>) -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.server.sse_keepalive = keep_alive;
    Gateway::start_with(opts).await
}

/// The body's frames: event types, `[DONE]` as "DONE", and the comment
/// frames as "keep-alive" (checked to be exactly the keep-alive comment).
async fn frames(resp: reqwest::Response) -> Vec<String> {
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        buf.push_str(std::str::from_utf8(&chunk.expect("chunk")).expect("utf-8"));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            if frame.starts_with(':') {
                assert_eq!(frame, ": keep-alive\n\n");
                out.push("keep-alive".to_owned());
                continue;
            }
            let data = frame
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("data line");
            if data == "[DONE]" {
                out.push("DONE".to_owned());
                return out;
            }
            let event: Value = serde_json::from_str(data).expect("event JSON");
            out.push(event["type"].as_str().expect("type").to_owned());
        }
    }
    out
}

async fn start_background(gw: &Gateway, stream: bool) -> reqwest::Response {
    gw.upstream
        .push(Reply::text("late answer").first_byte_delay(SLOW));
    let body = json!({"model": "m", "input": "hi", "background": true, "stream": stream});
    gw.client
        .post(gw.url("/v1/responses"))
        .json(&body)
        .send()
        .await
        .expect("create")
}

fn keep_alives(frames: &[String]) -> usize {
    frames.iter().filter(|f| *f == "keep-alive").count()
}

#[tokio::test]
async fn a_resumed_stream_gets_keep_alives_while_the_run_is_silent() {
    let gw = gateway(Some(EVERY)).await;
    let queued: Value = start_background(&gw, false)
        .await
        .json()
        .await
        .expect("json");
    let id = queued["id"].as_str().expect("id");
    // After `response.created` (0), `response.queued` (1) and
    // `response.in_progress` (2): the stream has nothing to send until the
    // slow upstream answers.
    let resp = gw
        .client
        .get(gw.url(&format!("/v1/responses/{id}?stream=true&starting_after=2")))
        .send()
        .await
        .expect("resume");
    let got = frames(resp).await;
    assert!(keep_alives(&got) >= 1, "{got:?}");
    let events: Vec<&String> = got.iter().filter(|f| *f != "keep-alive").collect();
    assert_eq!(
        events.first().map(|s| s.as_str()),
        Some("response.output_item.added")
    );
    assert_eq!(
        &got[got.len() - 2..],
        ["response.completed", "DONE"],
        "{got:?}"
    );
}

#[tokio::test]
async fn a_background_create_stream_gets_them_too_and_none_when_off() {
    let gw = gateway(Some(EVERY)).await;
    let got = frames(start_background(&gw, true).await).await;
    assert!(keep_alives(&got) >= 1, "{got:?}");
    assert_eq!(got[0], "response.created", "{got:?}");
    assert_eq!(&got[got.len() - 2..], ["response.completed", "DONE"]);

    let gw = gateway(None).await;
    let got = frames(start_background(&gw, true).await).await;
    assert_eq!(keep_alives(&got), 0, "{got:?}");
    assert_eq!(&got[got.len() - 2..], ["response.completed", "DONE"]);
}

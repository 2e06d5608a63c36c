//! Background mode and stream resume through the real HTTP server: queued
//! answers, polling to completion, cancel while queued and while running,
//! and re-attaching to a stream after the client left.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use windlass_testkit::{Gateway, GatewayOptions, Reply};

fn gateway_options(workers: usize) -> GatewayOptions {
    let mut opts = GatewayOptions::default();
    opts.server.background.workers = workers;
    opts
}

async fn poll_until_done(gw: &Gateway, id: &str) -> Value {
    for _ in 0..400 {
        let (status, body) = gw.get_json(&format!("/v1/responses/{id}")).await;
        assert_eq!(status, 200, "{body}");
        if !matches!(body["status"].as_str(), Some("queued" | "in_progress")) {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("response {id} never ended");
}

/// SSE events (`data:` JSON) of a body, until `[DONE]`; `stop_after` events
/// read, the connection is dropped instead.
async fn read_events(resp: reqwest::Response, stop_after: Option<usize>) -> (Vec<Value>, bool) {
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut events = Vec::new();
    while let Some(chunk) = body.next().await {
        buf.push_str(std::str::from_utf8(&chunk.expect("chunk")).expect("utf-8"));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let data = frame
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("data line");
            if data == "[DONE]" {
                return (events, true);
            }
            let event: Value = serde_json::from_str(data).expect("event json");
            let kind = frame.lines().next().and_then(|l| l.strip_prefix("event: "));
            assert_eq!(kind, event["type"].as_str(), "event line matches type");
            events.push(event);
            if stop_after.is_some_and(|n| events.len() >= n) {
                return (events, false);
            }
        }
    }
    (events, false)
}

fn seqs(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e["sequence_number"].as_u64().expect("seq"))
        .collect()
}

#[tokio::test]
async fn a_background_response_is_queued_then_polled_to_completion() {
    let gw = Gateway::start_with(gateway_options(4)).await;
    gw.upstream.push(Reply::text("Done in the background."));
    let (status, queued) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "work", "background": true}),
        )
        .await;
    assert_eq!(status, 200, "{queued}");
    assert_eq!(queued["status"], "queued");
    assert_eq!(queued["background"], true);
    let id = queued["id"].as_str().expect("id");
    let done = poll_until_done(&gw, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["background"], true);
    assert_eq!(
        done["output"][0]["content"][0]["text"],
        "Done in the background."
    );
    // Its events were kept: the whole stream can be read afterwards.
    let resp = gw
        .client
        .get(gw.url(&format!("/v1/responses/{id}?stream=true")))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 200);
    let (events, done) = read_events(resp, None).await;
    assert!(done);
    assert_eq!(events[0]["type"], "response.created");
    assert_eq!(events[0]["response"]["status"], "queued");
    assert_eq!(events[1]["type"], "response.queued");
    assert_eq!(events[1]["response"]["status"], "queued");
    assert_eq!(events[2]["type"], "response.in_progress");
    assert_eq!(events.last().expect("last")["type"], "response.completed");
    let expected: Vec<u64> = (0..events.len() as u64).collect();
    assert_eq!(seqs(&events), expected);
    // Deleting the response deletes its events.
    let (status, _) = gw.delete(&format!("/v1/responses/{id}")).await;
    assert_eq!(status, 200);
    let (status, _) = gw
        .get_json(&format!("/v1/responses/{id}?stream=true"))
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn background_responses_are_cancelled_while_queued_and_while_running() {
    let gw = Gateway::start_with(gateway_options(1)).await;
    // The first takes the only worker and waits on the upstream.
    gw.upstream.push(Reply::text("never").stall());
    let body = json!({"model": "m", "input": "work", "background": true});
    let (_, running) = gw.post_json("/v1/responses", &body).await;
    let running_id = running["id"].as_str().expect("id").to_owned();
    assert!(
        gw.upstream
            .wait_for_requests(1, Duration::from_secs(10))
            .await
    );
    let (_, queued) = gw.post_json("/v1/responses", &body).await;
    let queued_id = queued["id"].as_str().expect("id").to_owned();
    let (_, polled) = gw.get_json(&format!("/v1/responses/{queued_id}")).await;
    assert_eq!(polled["status"], "queued");
    let (_, polled) = gw.get_json(&format!("/v1/responses/{running_id}")).await;
    assert_eq!(polled["status"], "in_progress");

    let (status, cancelled) = gw
        .post_json(&format!("/v1/responses/{queued_id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let (status, cancelled) = gw
        .post_json(&format!("/v1/responses/{running_id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    for id in [&queued_id, &running_id] {
        let (_, stored) = gw.get_json(&format!("/v1/responses/{id}")).await;
        assert_eq!(stored["status"], "cancelled", "{stored}");
    }
    // The queued one never reached the upstream.
    assert_eq!(gw.upstream.request_count(), 1);
}

#[tokio::test]
async fn a_background_stream_outlives_its_client_and_resumes_without_gaps() {
    let gw = Gateway::start_with(gateway_options(4)).await;
    gw.upstream.push(
        Reply::text("one two three four five six seven eight")
            .chunk_chars(3)
            .delay_between_chunks(Duration::from_millis(20)),
    );
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&json!({"model": "m", "input": "count", "background": true, "stream": true}))
        .send()
        .await
        .expect("post");
    let (first, done) = read_events(resp, Some(4)).await;
    assert!(!done);
    let id = first[0]["response"]["id"].as_str().expect("id").to_owned();
    let last = first.last().expect("event")["sequence_number"]
        .as_u64()
        .expect("seq");
    let resp = gw
        .client
        .get(gw.url(&format!(
            "/v1/responses/{id}?stream=true&starting_after={last}"
        )))
        .send()
        .await
        .expect("get");
    let (rest, done) = read_events(resp, None).await;
    assert!(done);
    let all: Vec<Value> = first.into_iter().chain(rest).collect();
    let expected: Vec<u64> = (0..all.len() as u64).collect();
    assert_eq!(seqs(&all), expected, "no event missing or repeated");
    let end = all.last().expect("end");
    assert_eq!(end["type"], "response.completed", "{end}");
    assert_eq!(
        end["response"]["output"][0]["content"][0]["text"],
        "one two three four five six seven eight"
    );
}

#[tokio::test]
async fn a_plain_stream_whose_client_left_is_cancelled_and_its_stream_kept() {
    let gw = Gateway::start().await;
    gw.upstream.push(
        Reply::text("abcdefghijklmnop")
            .chunk_chars(1)
            .stall_after(6),
    );
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&json!({"model": "m", "input": "x", "stream": true}))
        .send()
        .await
        .expect("post");
    let (first, _) = read_events(resp, Some(5)).await;
    let id = first[0]["response"]["id"].as_str().expect("id").to_owned();
    let ended = poll_until_done(&gw, &id).await;
    assert_eq!(ended["status"], "cancelled");
    let resp = gw
        .client
        .get(gw.url(&format!("/v1/responses/{id}?stream=true&starting_after=1")))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 200);
    let (rest, done) = read_events(resp, None).await;
    assert!(done);
    assert_eq!(rest[0]["sequence_number"], 2);
    assert_eq!(rest.last().expect("end")["type"], "response.cancelled");
}

#[tokio::test]
async fn a_stream_read_to_its_end_is_not_resumable() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("hi"));
    let capture = gw
        .stream(&json!({"model": "m", "input": "x", "stream": true}))
        .await;
    let id = capture.events[0].1["response"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let (status, body) = gw
        .get_json(&format!("/v1/responses/{id}?stream=true"))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "stream_not_resumable");
}

/// Live rows a dead replica left behind (lease expired) are claimed by the
/// running server's lease keeper: the queued one runs with its id, the
/// running one ends `failed` with the reason.
#[tokio::test]
async fn rows_of_a_dead_replica_are_resumed_or_failed() {
    use windlass_engine::LiveRun;
    use windlass_protocol::{ResponseResource, ResponseStatus};

    let mut opts = gateway_options(4);
    opts.server.background.lease_ms = 300;
    let gw = Gateway::start_with(opts).await;
    let runs = gw.state.runs.clone().expect("run store");
    let skeleton = |id: &str, status: ResponseStatus| -> ResponseResource {
        let mut r: ResponseResource = serde_json::from_value(json!({
            "id": id, "object": "response", "created_at": 1, "status": "queued",
            "model": "m", "output": [], "tools": [], "tool_choice": "auto",
            "truncation": "disabled", "parallel_tool_calls": true,
            "text": {"format": {"type": "text"}}, "top_p": 1.0, "presence_penalty": 0.0,
            "frequency_penalty": 0.0, "top_logprobs": 0, "temperature": 1.0,
            "store": true, "background": true, "service_tier": "default", "metadata": {}
        }))
        .expect("resource");
        r.status = status;
        r
    };
    let queued = skeleton("resp_dead_queued", ResponseStatus::Queued);
    let running = skeleton("resp_dead_running", ResponseStatus::InProgress);
    let blob = json!({"request": {"model": "m", "input": "again", "background": true},
                      "principal": null, "requires_action": false})
    .to_string();
    gw.upstream.push(Reply::text("Run again."));
    for (r, resume) in [(&queued, Some(blob.as_str())), (&running, None)] {
        runs.put_live(LiveRun {
            tenant: "default",
            response: r,
            replica: "replica_dead",
            lease_until: 1,
            resume,
        })
        .await
        .expect("put");
    }
    let done = poll_until_done(&gw, "resp_dead_queued").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"][0]["content"][0]["text"], "Run again.");
    let failed = poll_until_done(&gw, "resp_dead_running").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed["error"]["message"]
        .as_str()
        .expect("message")
        .contains("stopped before it finished"));
    assert_eq!(gw.upstream.request_count(), 1);
}

//! Failure modes: cuts, stalls, delays, client disconnects, shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::time::{Duration, Instant};

use common::{chat_body, joined_delta, post, post_with, read_stream};
use futures::StreamExt;
use windlass_testkit::{FakeUpstream, Reply};

const LIMIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn cut_after_ends_without_done() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("abcdefghijkl").chunk_chars(2).cut_after(3));
    let got = read_stream(post(&upstream, &chat_body(true, true)).await, LIMIT).await;
    assert!(!got.timed_out, "a cut closes the connection");
    assert!(got.errored, "the body must end abruptly, not cleanly");
    assert!(!got.raw.contains("[DONE]"));
    let chunks = got.chunks();
    assert_eq!(chunks.len(), 3, "role + 2 content chunks: {}", got.raw);
    assert_eq!(joined_delta(&chunks, "content"), "abcd");
    assert_eq!(
        upstream.disconnects(),
        0,
        "a scripted cut is not a client disconnect"
    );
}

#[tokio::test]
async fn cut_after_with_pacing_still_delivers_chunks() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("abcdefghijkl")
            .chunk_chars(2)
            .delay_between_chunks(Duration::from_millis(5))
            .cut_after(5),
    );
    let got = read_stream(post(&upstream, &chat_body(true, false)).await, LIMIT).await;
    assert!(got.errored && !got.raw.contains("[DONE]"));
    assert_eq!(joined_delta(&got.chunks(), "content"), "abcdefgh");
}

#[tokio::test]
async fn stall_after_leaves_the_body_hanging() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("abcdefgh").chunk_chars(2).stall_after(2));
    let got = read_stream(
        post(&upstream, &chat_body(true, false)).await,
        Duration::from_millis(300),
    )
    .await;
    assert!(got.timed_out, "body must hang, got {got:?}");
    assert!(!got.errored && !got.raw.contains("[DONE]"));
    assert_eq!(got.chunks().len(), 2);
    assert_eq!(joined_delta(&got.chunks(), "content"), "ab");
}

#[tokio::test]
async fn stall_never_sends_headers() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("never").stall());
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let err = client
        .post(format!("{}/chat/completions", upstream.base_url()))
        .json(&chat_body(false, false))
        .send()
        .await
        .expect_err("headers must never arrive");
    assert!(err.is_timeout());
    // Recorded even though it was never answered; abandoning it counts.
    assert_eq!(upstream.request_count(), 1);
    assert_eq!(upstream.last_request().unwrap()["model"], "test-model");
    assert!(upstream.wait_for_disconnects(1, LIMIT).await);
}

#[tokio::test]
async fn first_byte_delay_delays_headers() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("late").first_byte_delay(Duration::from_millis(200)));
    upstream.push(Reply::text("late").first_byte_delay(Duration::from_millis(200)));
    let started = Instant::now();
    let resp = post(&upstream, &chat_body(true, false)).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(read_stream(resp, LIMIT).await.ends_with_done());

    let started = Instant::now();
    let resp = post(&upstream, &chat_body(false, false)).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(resp.status(), 200);
    assert_eq!(upstream.disconnects(), 0);
}

#[tokio::test]
async fn dropping_a_stream_midway_counts_a_disconnect() {
    let upstream = FakeUpstream::start().await;
    upstream.push(
        Reply::text("x".repeat(200))
            .chunk_chars(1)
            .delay_between_chunks(Duration::from_millis(10)),
    );
    upstream.push(Reply::text("complete"));
    let client = reqwest::Client::new();

    let resp = post_with(&client, &upstream, &chat_body(true, false)).await;
    let mut body = resp.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    assert!(first.starts_with(b"data: "));
    assert_eq!(upstream.disconnects(), 0);
    drop(body);
    assert!(
        upstream.wait_for_disconnects(1, LIMIT).await,
        "drop not detected"
    );
    assert_eq!(upstream.disconnects(), 1);

    // A stream read to the end does not count.
    let got = read_stream(
        post_with(&client, &upstream, &chat_body(true, false)).await,
        LIMIT,
    )
    .await;
    assert!(got.ends_with_done());
    assert!(
        !upstream
            .wait_for_disconnects(2, Duration::from_millis(200))
            .await
    );
    assert_eq!(upstream.disconnects(), 1);
}

#[tokio::test]
async fn abandoning_a_stalled_stream_counts_a_disconnect() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("abc").stall_after(1));
    let resp = post(&upstream, &chat_body(true, false)).await;
    let got = read_stream(resp, Duration::from_millis(100)).await;
    assert!(got.timed_out);
    // `got` consumed the response; the connection is gone now.
    assert!(upstream.wait_for_disconnects(1, LIMIT).await);
}

#[tokio::test]
async fn wait_for_requests_sees_in_flight_requests() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("x").stall());
    let url = format!("{}/chat/completions", upstream.base_url());
    let task = tokio::spawn(async move {
        let _ = reqwest::Client::new()
            .post(url)
            .json(&chat_body(false, false))
            .send()
            .await;
    });
    assert!(upstream.wait_for_requests(1, LIMIT).await);
    assert!(
        !upstream
            .wait_for_requests(2, Duration::from_millis(50))
            .await
    );
    task.abort();
}

#[tokio::test]
async fn shutdown_ends_stalls() {
    let upstream = FakeUpstream::start().await;
    upstream.push(Reply::text("abc").stall_after(1));
    let resp = post(&upstream, &chat_body(true, false)).await;
    let reader = tokio::spawn(read_stream(resp, Duration::from_secs(30)));
    assert!(upstream.wait_for_requests(1, LIMIT).await);
    let started = Instant::now();
    upstream.clone().shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(4));
    let got = reader.await.unwrap();
    assert!(!got.timed_out, "shutdown must end the stalled body");
    assert!(!got.raw.contains("[DONE]"));
    assert!(reqwest::get(format!("{}/models", upstream.base_url()))
        .await
        .is_err());
}

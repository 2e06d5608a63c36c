//! The provider against a local fake upstream: errors, retries, timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use support::{delta, finish, frame, Fake, Script, DONE};
use windlass_engine::{ModelEvent, ModelProvider, ModelRequest, ProviderError, TimeoutPhase};
use windlass_protocol::Item;
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};

fn config(fake: &Fake) -> ChatProviderConfig {
    ChatProviderConfig {
        first_byte_timeout: Duration::from_millis(500),
        idle_timeout: Duration::from_millis(300),
        ..ChatProviderConfig::new(&fake.base_url)
    }
}

fn provider(cfg: ChatProviderConfig) -> ChatCompletionsProvider {
    ChatCompletionsProvider::new(cfg).expect("provider")
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        transcript: vec![Item::user_text("hi")].into(),
        stream: true,
        ..ModelRequest::default()
    }
}

fn ok_stream() -> Script {
    Script::sse(vec![
        delta(json!({"content": "ok"})),
        finish("stop"),
        DONE.into(),
    ])
}

async fn start_err(p: &ChatCompletionsProvider) -> ProviderError {
    match p.start(request()).await {
        Ok(_) => panic!("start succeeded"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn http_500_is_mapped_with_the_upstream_message_and_not_retried() {
    let fake = Fake::start().await;
    fake.push(Script::json(
        500,
        json!({"error": {"message": "engine dead", "type": "InternalServerError", "code": "engine_dead"}}),
    ));
    fake.push(ok_stream());
    let err = start_err(&provider(config(&fake))).await;
    assert_eq!(
        err,
        ProviderError::Status {
            status: 500,
            message: "engine dead".into(),
            code: Some("engine_dead".into())
        }
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn plain_text_error_body_becomes_the_message() {
    let fake = Fake::start().await;
    fake.push(Script::Json {
        status: 400,
        body: "context length exceeded".into(),
        headers: vec![],
    });
    let err = start_err(&provider(config(&fake))).await;
    assert!(
        matches!(&err, ProviderError::Status { status: 400, message, code: None } if message == "context length exceeded"),
        "{err:?}"
    );
}

#[tokio::test]
async fn retries_503_then_succeeds() {
    let fake = Fake::start().await;
    fake.push(Script::json(503, json!({"error": {"message": "loading"}})));
    fake.push(ok_stream());
    let started = Instant::now();
    let stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events[0], Ok(ModelEvent::TextDelta("ok".into())));
    assert_eq!(fake.count(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "no backoff"
    );
}

#[tokio::test]
async fn retries_429_honouring_a_small_retry_after() {
    let fake = Fake::start().await;
    fake.push(Script::Json {
        status: 429,
        body: "{}".into(),
        headers: vec![("retry-after-ms", "300".into())],
    });
    fake.push(ok_stream());
    let started = Instant::now();
    let _stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    assert_eq!(fake.count(), 2);
    // A lower bound only (a sleep never ends early, so this cannot flake
    // under load): the first backoff step is at most 150 ms, so waiting
    // 300 ms means the server's hint was used.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "ignored Retry-After"
    );
}

#[tokio::test]
async fn a_long_retry_after_is_not_waited_for() {
    let fake = Fake::start().await;
    fake.push(Script::Json {
        status: 429,
        body: json!({"error": {"message": "slow down"}}).to_string(),
        headers: vec![("retry-after", "600".into())],
    });
    fake.push(ok_stream());
    let err = start_err(&provider(config(&fake))).await;
    assert!(
        matches!(err, ProviderError::Status { status: 429, .. }),
        "{err:?}"
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn gives_up_after_max_retries() {
    let fake = Fake::start().await;
    for _ in 0..5 {
        fake.push(Script::json(
            502,
            json!({"error": {"message": "bad gateway"}}),
        ));
    }
    let err = start_err(&provider(ChatProviderConfig {
        max_retries: 2,
        ..config(&fake)
    }))
    .await;
    assert!(
        matches!(err, ProviderError::Status { status: 502, .. }),
        "{err:?}"
    );
    assert_eq!(fake.count(), 3);
}

#[tokio::test]
async fn no_retry_after_the_first_byte() {
    let fake = Fake::start().await;
    fake.push(Script::sse_then(
        vec![
            delta(json!({"content": "par"})),
            delta(json!({"content": "tial"})),
        ],
        support::End::Cut,
    ));
    fake.push(ok_stream());
    let stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0], Ok(ModelEvent::TextDelta("par".into())));
    assert_eq!(events[1], Ok(ModelEvent::TextDelta("tial".into())));
    assert!(
        matches!(events[2], Err(ProviderError::Interrupted(_))),
        "{events:?}"
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn first_byte_timeout_when_headers_never_come() {
    let fake = Fake::start().await;
    fake.push(Script::Hang);
    fake.push(ok_stream());
    let started = Instant::now();
    let err = start_err(&provider(config(&fake))).await;
    assert_eq!(err, ProviderError::Timeout(TimeoutPhase::FirstByte));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn first_byte_timeout_when_the_body_never_starts() {
    // Headers arrive at once (as vLLM sends them) but no token follows.
    let (base_url, count) = support::raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    )
    .await;
    let p = provider(ChatProviderConfig {
        first_byte_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_secs(30),
        ..ChatProviderConfig::new(base_url)
    });
    let started = Instant::now();
    let err = start_err(&p).await;
    assert_eq!(err, ProviderError::Timeout(TimeoutPhase::FirstByte));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn idle_timeout_between_chunks() {
    let fake = Fake::start().await;
    fake.push(Script::sse_then(
        vec![delta(json!({"content": "a"}))],
        support::End::Stall,
    ));
    let stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    let started = Instant::now();
    let events: Vec<_> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .expect("ends");
    assert_eq!(
        events,
        vec![
            Ok(ModelEvent::TextDelta("a".into())),
            Err(ProviderError::Timeout(TimeoutPhase::Idle))
        ]
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn slow_but_steady_stream_is_not_idle() {
    let fake = Fake::start().await;
    fake.push(Script::Sse {
        frames: (0..8)
            .map(|_| delta(json!({"content": "."})))
            .chain([finish("stop"), DONE.into()])
            .collect(),
        gap: Duration::from_millis(100),
        end: support::End::Close,
    });
    let stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events.len(), 9, "{events:?}");
    assert!(events.iter().all(Result::is_ok), "{events:?}");
}

#[tokio::test]
async fn connect_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let p = provider(ChatProviderConfig {
        max_retries: 1,
        ..ChatProviderConfig::new(format!("http://{addr}/v1"))
    });
    let err = match p.start(request()).await {
        Ok(_) => panic!("connected"),
        Err(e) => e,
    };
    assert!(matches!(err, ProviderError::Connect(_)), "{err:?}");
    let err = p.list_models().await.expect_err("no server");
    assert!(matches!(err, ProviderError::Connect(_)), "{err:?}");
}

#[tokio::test]
async fn error_event_inside_the_stream() {
    let fake = Fake::start().await;
    fake.push(Script::sse(vec![
        delta(json!({"content": "a"})),
        frame(json!({"error": {"object": "error", "message": "OOM", "type": "InternalServerError", "code": 500}})),
        DONE.into(),
    ]));
    let stream = provider(config(&fake))
        .start(request())
        .await
        .expect("starts");
    let events: Vec<_> = stream.collect().await;
    assert_eq!(events[0], Ok(ModelEvent::TextDelta("a".into())));
    assert!(
        matches!(&events[1], Err(ProviderError::Status { status: 500, message, .. }) if message == "OOM"),
        "{events:?}"
    );
    assert_eq!(events.len(), 2);
}

#[test]
fn invalid_base_url_is_rejected() {
    for url in ["not a url", "ftp://host/v1"] {
        let err = ChatCompletionsProvider::new(ChatProviderConfig::new(url)).expect_err(url);
        assert!(matches!(err, ProviderError::Connect(_)), "{url}: {err:?}");
    }
}

#[tokio::test]
async fn unsupported_input_fails_before_any_request() {
    let fake = Fake::start().await;
    let mut req = request();
    req.transcript
        .push(Item::ItemReference(windlass_protocol::ItemReference {
            id: "msg_1".into(),
        }));
    let err = provider(config(&fake)).start(req).await.err();
    assert!(
        matches!(err, Some(ProviderError::Unsupported { .. })),
        "{err:?}"
    );
    assert_eq!(fake.count(), 0);
}

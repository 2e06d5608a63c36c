//! Token counts and context lengths through each kind's tokenizer, against
//! a local server answering as llama.cpp, vLLM, OpenAI and Anthropic do
//! (`tests/rig.rs` checks the real llama.cpp server).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use windlass_engine::{CountMethod, ModelProvider, ModelRequest, ModelTool};
use windlass_protocol::Item;
use windlass_providers::{provider_for, ChatProviderConfig, Tokenizer, UpstreamKind};

type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A server with the endpoints of `flavour`, recording what it is sent.
async fn server(flavour: &'static str) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = |path: &'static str, answer: fn(&Value) -> Value| {
        move |State(seen): State<Seen>, Json(body): Json<Value>| async move {
            let out = answer(&body);
            seen.lock().unwrap().push((path.to_owned(), body));
            Json(out)
        }
    };
    let mut app = Router::new();
    match flavour {
        "llama.cpp" => {
            app = app
                .route("/props", get(|| async { Json(json!({"default_generation_settings": {"n_ctx": 2048}})) }))
                .route("/v1/models", get(|| async { Json(json!({"data": [{"id": "q"}]})) }))
                .route("/apply-template", post(record("/apply-template", |b| {
                    json!({"prompt": format!("<|{}|>", b["messages"][0]["content"].as_str().unwrap_or(""))})
                })))
                .route("/tokenize", post(record("/tokenize", |b| {
                    let n = b["content"].as_str().unwrap_or("").len();
                    json!({"tokens": vec![1; n]})
                })));
        }
        "vllm" => {
            app = app
                .route("/props", get(|| async { StatusCode::NOT_FOUND }))
                .route(
                    "/version",
                    get(|| async { Json(json!({"version": "0.11.0"})) }),
                )
                .route(
                    "/v1/models",
                    get(|| async { Json(json!({"data": [{"id": "q", "max_model_len": 16384}]})) }),
                )
                .route(
                    "/tokenize",
                    post(record(
                        "/tokenize",
                        |_| json!({"count": 42, "max_model_len": 16384, "tokens": []}),
                    )),
                );
        }
        "plain" => {
            app = app
                .route("/props", get(|| async { StatusCode::NOT_FOUND }))
                .route("/version", get(|| async { StatusCode::NOT_FOUND }))
                .route(
                    "/v1/models",
                    get(|| async { Json(json!({"data": [{"id": "q"}]})) }),
                );
        }
        "openai" => {
            app = app.route(
                "/v1/responses/input_tokens",
                post(record(
                    "/v1/responses/input_tokens",
                    |_| json!({"object": "response.input_tokens", "input_tokens": 17}),
                )),
            );
        }
        "anthropic" => {
            app = app.route(
                "/v1/messages/count_tokens",
                post(record(
                    "/v1/messages/count_tokens",
                    |_| json!({"input_tokens": 23}),
                )),
            );
        }
        _ => unreachable!(),
    }
    let state = seen.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app.with_state(state)).await.unwrap();
    });
    (format!("http://{addr}/v1"), seen)
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "q".into(),
        instructions: Some("Be brief".into()),
        transcript: vec![Item::user_text("hi there")].into(),
        tools: vec![ModelTool {
            name: "add".into(),
            description: Some("add two numbers".into()),
            parameters: json!({"type": "object", "properties": {"a": {"type": "number"}}}),
            strict: None,
        }]
        .into(),
        ..ModelRequest::default()
    }
}

fn provider(kind: UpstreamKind, url: &str, tokenizer: Tokenizer) -> Arc<dyn ModelProvider> {
    let mut cfg = ChatProviderConfig::new(url);
    cfg.tokenizer = tokenizer;
    cfg.max_retries = 0;
    provider_for(kind, cfg).expect("provider")
}

#[tokio::test]
async fn llama_cpp_is_detected_and_counts_the_templated_prompt() {
    let (url, seen) = server("llama.cpp").await;
    let p = provider(UpstreamKind::Chat, &url, Tokenizer::Auto);
    let count = p.count_tokens(&request()).await.expect("count");
    assert_eq!(count.method, CountMethod::Upstream);
    // The fake's template wraps the first message (the instructions).
    assert_eq!(count.input_tokens, "<|Be brief|>".len() as u64);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].0, "/apply-template");
    assert_eq!(seen[0].1["messages"][1]["content"], "hi there");
    assert_eq!(seen[0].1["tools"][0]["function"]["name"], "add");
    assert_eq!(seen[1].0, "/tokenize");
    assert_eq!(seen[1].1["add_special"], true);
    assert_eq!(seen[1].1["parse_special"], true);
    // /models has no length for it: /props' per-slot n_ctx.
    assert_eq!(p.context_length("q").await.expect("ctx"), Some(2048));
}

#[tokio::test]
async fn vllm_is_detected_and_counts_the_messages() {
    let (url, seen) = server("vllm").await;
    let p = provider(UpstreamKind::Chat, &url, Tokenizer::Auto);
    let count = p.count_tokens(&request()).await.expect("count");
    assert_eq!(
        count,
        windlass_engine::TokenCount {
            input_tokens: 42,
            method: CountMethod::Upstream
        }
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].0, "/tokenize");
    assert_eq!(seen[0].1["model"], "q");
    assert_eq!(seen[0].1["add_generation_prompt"], true);
    assert_eq!(seen[0].1["messages"][0]["role"], "system");
    assert_eq!(seen[0].1["tools"][0]["function"]["name"], "add");
    assert_eq!(p.context_length("q").await.expect("ctx"), Some(16384));
}

#[tokio::test]
async fn without_a_tokenizer_the_count_is_an_estimate() {
    let (url, _) = server("plain").await;
    let p = provider(UpstreamKind::Chat, &url, Tokenizer::Auto);
    let count = p.count_tokens(&request()).await.expect("count");
    assert_eq!(count.method, CountMethod::Estimate);
    assert!(count.input_tokens > 10, "{count:?}");
    assert_eq!(p.context_length("q").await.expect("ctx"), None);
    // A configured length wins.
    let mut cfg = ChatProviderConfig::new(&url);
    cfg.context_length = Some(999);
    let p = provider_for(UpstreamKind::Chat, cfg).unwrap();
    assert_eq!(p.context_length("q").await.expect("ctx"), Some(999));
}

#[tokio::test]
async fn openai_responses_counts_with_its_own_endpoint() {
    let (url, seen) = server("openai").await;
    let p = provider(UpstreamKind::Responses, &url, Tokenizer::Auto);
    let count = p.count_tokens(&request()).await.expect("count");
    assert_eq!(count.input_tokens, 17);
    assert_eq!(count.method, CountMethod::Upstream);
    let body = seen.lock().unwrap()[0].1.clone();
    assert_eq!(body["instructions"], "Be brief");
    assert_eq!(body["tools"][0]["name"], "add");
    // Only the fields the endpoint takes.
    for key in ["store", "stream", "include"] {
        assert!(body.get(key).is_none(), "{key}: {body}");
    }
}

#[tokio::test]
async fn anthropic_counts_with_its_own_endpoint() {
    let (url, seen) = server("anthropic").await;
    let p = provider(UpstreamKind::Anthropic, &url, Tokenizer::Auto);
    let count = p.count_tokens(&request()).await.expect("count");
    assert_eq!(count.input_tokens, 23);
    let body = seen.lock().unwrap()[0].1.clone();
    assert_eq!(body["system"], "Be brief");
    assert_eq!(body["tools"][0]["name"], "add");
    for key in ["max_tokens", "stream"] {
        assert!(body.get(key).is_none(), "{key}: {body}");
    }
}

#[tokio::test]
async fn a_request_the_kind_cannot_carry_is_refused_before_counting() {
    let (url, seen) = server("anthropic").await;
    let p = provider(UpstreamKind::Anthropic, &url, Tokenizer::Auto);
    let mut r = request();
    r.logprobs = true;
    let err = p.count_tokens(&r).await.expect_err("refused");
    assert!(
        matches!(err, windlass_engine::ProviderError::Unsupported { param: Some(ref p), .. } if p == "include"),
        "{err:?}"
    );
    assert!(seen.lock().unwrap().is_empty());
}

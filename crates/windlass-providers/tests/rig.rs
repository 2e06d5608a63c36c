//! Against the rig's real llama.cpp server (`../shared/rig`), when
//! `WINDLASS_RIG_LLAMA` names its API root (`http://127.0.0.1:8081/v1`);
//! without it these tests only say they did not run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use futures::StreamExt;
use serde_json::{json, Value};
use windlass_engine::{CountMethod, ModelEvent, ModelProvider, ModelRequest, ModelTool};
use windlass_protocol::Item;
use windlass_providers::{provider_for, ChatProviderConfig, UpstreamKind};

fn rig() -> Option<String> {
    let url = std::env::var("WINDLASS_RIG_LLAMA").ok();
    windlass_providers::install_crypto_provider();
    if url.is_none() {
        eprintln!("WINDLASS_RIG_LLAMA not set: the rig's llama-server is not checked");
    }
    url
}

async fn first_model(url: &str) -> String {
    let models: Value = reqwest::get(format!("{url}/models"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    models["data"][0]["id"].as_str().unwrap().to_owned()
}

fn request(model: String) -> ModelRequest {
    ModelRequest {
        model,
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

fn provider(url: &str) -> std::sync::Arc<dyn ModelProvider> {
    provider_for(UpstreamKind::Chat, ChatProviderConfig::new(url)).expect("provider")
}

/// The rig's llama-server: Windlass's count equals the prompt tokens the
/// server reports for the same request as a chat completion.
#[tokio::test]
async fn rig_llama_cpp_count_equals_its_prompt_tokens() {
    let Some(url) = rig() else { return };
    let model = first_model(&url).await;
    let r = request(model.clone());
    let p = provider(&url);
    let count = p.count_tokens(&r).await.expect("count");
    assert_eq!(count.method, CountMethod::Upstream);

    let chat = json!({
        "model": model, "max_tokens": 1,
        "messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "hi there"}],
        "tools": [{"type": "function", "function": {"name": "add", "description": "add two numbers",
                   "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}}],
    });
    let answer: Value = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .json(&chat)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        count.input_tokens,
        answer["usage"]["prompt_tokens"].as_u64().unwrap()
    );
    let ctx = p.context_length(&model).await.expect("ctx").expect("known");
    assert!(ctx >= 512, "{ctx}");
}

/// Streamed text from the real server arrives with its tokens' logprobs.
#[tokio::test]
async fn rig_llama_cpp_streams_logprobs_with_the_text() {
    let Some(url) = rig() else { return };
    let mut r = request(first_model(&url).await);
    r.tools = Vec::new().into();
    r.transcript = vec![Item::user_text("Say hello")].into();
    r.max_output_tokens = Some(4);
    r.logprobs = true;
    r.top_logprobs = Some(2);
    r.stream = true;
    let events: Vec<ModelEvent> = provider(&url)
        .start(r)
        .await
        .expect("starts")
        .map(|e| e.expect("event"))
        .collect()
        .await;
    let mut text = String::new();
    let mut tokens = String::new();
    for e in &events {
        if let ModelEvent::TextDeltaLogprobs { delta, logprobs } = e {
            text.push_str(delta);
            for lp in logprobs {
                tokens.push_str(&lp.token);
                assert!(lp.logprob <= 0.0, "{lp:?}");
                assert_eq!(lp.top_logprobs.len(), 2, "{lp:?}");
            }
        }
    }
    assert!(!text.is_empty(), "{events:?}");
    assert_eq!(tokens, text);
}

use serde_json::json;
use windlass_engine::{CountMethod, ModelRequest, ModelTool};
use windlass_protocol::Item;

use super::*;

#[test]
fn context_length_from_model_lists() {
    let vllm =
        json!({"data": [{"id": "a", "max_model_len": 32768}, {"id": "b", "max_model_len": 8}]});
    assert_eq!(context_in_models(&vllm, "a"), Some(32768));
    assert_eq!(context_in_models(&vllm, "b"), Some(8));
    assert_eq!(context_in_models(&vllm, "c"), None);
    let llama = json!({"object": "list", "data": [{"id": "q", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}}]});
    assert_eq!(context_in_models(&llama, "q"), Some(4096));
    let openai = json!({"data": [{"id": "gpt", "owned_by": "openai"}]});
    assert_eq!(context_in_models(&openai, "gpt"), None);
}

#[test]
fn context_length_from_llama_cpp_props() {
    let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 2});
    assert_eq!(context_in_props(&props), Some(4096));
    assert_eq!(context_in_props(&json!({"n_ctx": 1024})), Some(1024));
    assert_eq!(context_in_props(&json!({})), None);
}

#[test]
fn the_estimate_grows_with_input_and_tools_and_says_it_is_one() {
    let mut r = ModelRequest {
        model: "m".into(),
        transcript: vec![Item::user_text("hello there")].into(),
        ..ModelRequest::default()
    };
    let small = estimate(&r).expect("estimate");
    assert_eq!(small.method, CountMethod::Estimate);
    r.instructions = Some("x".repeat(400));
    let more = estimate(&r).expect("estimate");
    assert!(
        more.input_tokens >= small.input_tokens + 100,
        "{more:?} {small:?}"
    );
    r.tools = vec![ModelTool {
        name: "add".into(),
        description: Some("y".repeat(400)),
        parameters: json!({"type": "object"}),
        strict: None,
    }]
    .into();
    let with_tools = estimate(&r).expect("estimate");
    assert!(with_tools.input_tokens >= more.input_tokens + 100);
}

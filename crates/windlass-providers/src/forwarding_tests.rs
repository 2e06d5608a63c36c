//! What each upstream kind does with the request fields a client sets
//! beyond the transcript: sent as is, mapped, or refused by name. The same
//! table is in docs/request-fields.md.

use serde_json::Value;
use windlass_engine::{ModelRequest, ProviderError};
use windlass_protocol::{Item, ReasoningEffort, ReasoningSummary, Verbosity};

use crate::anthropic::encode_messages_request;
use crate::config::MaxTokensField;
use crate::encode::encode_body;
use crate::responses::encode_responses;

fn full() -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        transcript: vec![Item::user_text("hi")].into(),
        top_logprobs: Some(2),
        logprobs: true,
        verbosity: Some(Verbosity::Low),
        reasoning_effort: Some(ReasoningEffort::Medium),
        reasoning_summary: Some(ReasoningSummary::Auto),
        service_tier: Some("priority".into()),
        prompt_cache_key: Some("pck".into()),
        safety_identifier: Some("sid".into()),
        user: Some("u".into()),
        ..ModelRequest::default()
    }
}

fn json(bytes: Result<Vec<u8>, ProviderError>) -> Value {
    serde_json::from_slice(&bytes.expect("encodes")).expect("json")
}

fn refused(bytes: Result<Vec<u8>, ProviderError>) -> String {
    match bytes {
        Err(ProviderError::Unsupported {
            param: Some(param), ..
        }) => param,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn chat_completions_sends_every_field_as_openai_names_it() {
    let v = json(encode_body(&full(), MaxTokensField::MaxTokens));
    assert_eq!(v["logprobs"], true);
    assert_eq!(v["top_logprobs"], 2);
    assert_eq!(v["verbosity"], "low");
    assert_eq!(v["reasoning_effort"], "medium");
    assert_eq!(v["service_tier"], "priority");
    assert_eq!(v["prompt_cache_key"], "pck");
    assert_eq!(v["safety_identifier"], "sid");
    assert_eq!(v["user"], "u");
    // The summary is made from the reasoning text the upstream streams.
    assert!(v.get("reasoning_summary").is_none(), "{v}");
}

#[test]
fn chat_completions_asks_for_logprobs_only_when_they_are_shown() {
    let mut r = full();
    r.logprobs = false;
    let v = json(encode_body(&r, MaxTokensField::MaxTokens));
    assert!(v.get("logprobs").is_none(), "{v}");
    assert!(v.get("top_logprobs").is_none(), "{v}");
}

#[test]
fn responses_sends_every_field_in_its_own_place() {
    let v = json(encode_responses(&full()));
    assert_eq!(v["top_logprobs"], 2);
    assert_eq!(
        v["include"],
        serde_json::json!([
            "reasoning.encrypted_content",
            "message.output_text.logprobs"
        ])
    );
    assert_eq!(v["text"], serde_json::json!({"verbosity": "low"}));
    assert_eq!(
        v["reasoning"],
        serde_json::json!({"effort": "medium", "summary": "auto"})
    );
    assert_eq!(v["service_tier"], "priority");
    assert_eq!(v["prompt_cache_key"], "pck");
    assert_eq!(v["safety_identifier"], "sid");
    assert_eq!(v["user"], "u");
    assert_eq!(v["store"], false);
}

#[test]
fn responses_leaves_out_what_is_not_set() {
    let r = ModelRequest {
        model: "m".into(),
        transcript: vec![Item::user_text("hi")].into(),
        ..ModelRequest::default()
    };
    let v = json(encode_responses(&r));
    for key in [
        "text",
        "reasoning",
        "service_tier",
        "prompt_cache_key",
        "safety_identifier",
        "user",
        "top_logprobs",
    ] {
        assert!(v.get(key).is_none(), "{key}: {v}");
    }
    assert_eq!(
        v["include"],
        serde_json::json!(["reasoning.encrypted_content"])
    );
}

fn anthropic_ok() -> ModelRequest {
    ModelRequest {
        logprobs: false,
        top_logprobs: None,
        verbosity: Some(Verbosity::Medium),
        ..full()
    }
}

#[test]
fn anthropic_maps_tier_user_and_effort() {
    let v = json(encode_messages_request(&anthropic_ok()));
    assert_eq!(v["service_tier"], "auto");
    assert_eq!(v["metadata"]["user_id"], "sid");
    assert_eq!(v["thinking"]["type"], "enabled");
    assert_eq!(v["thinking"]["budget_tokens"], 4096);
    // A routing hint for OpenAI's cache; Anthropic caches by prefix.
    assert!(v.get("prompt_cache_key").is_none(), "{v}");
    assert!(v.get("verbosity").is_none(), "{v}");

    let mut r = anthropic_ok();
    r.service_tier = Some("default".into());
    r.safety_identifier = None;
    let v = json(encode_messages_request(&r));
    assert_eq!(v["service_tier"], "standard_only");
    assert_eq!(v["metadata"]["user_id"], "u");
    r.service_tier = Some("flex".into());
    let v = json(encode_messages_request(&r));
    assert_eq!(v["service_tier"], "standard_only");
}

/// Sets one field of a request.
type Setter = fn(&mut ModelRequest);

#[test]
fn anthropic_refuses_what_would_change_the_answer() {
    type Case = (Setter, &'static str);
    let cases: [Case; 5] = [
        (|r| r.logprobs = true, "include"),
        (|r| r.top_logprobs = Some(1), "top_logprobs"),
        (|r| r.verbosity = Some(Verbosity::High), "text.verbosity"),
        (|r| r.presence_penalty = Some(0.5), "presence_penalty"),
        (|r| r.frequency_penalty = Some(-1.0), "frequency_penalty"),
    ];
    for (set, param) in cases {
        let mut r = anthropic_ok();
        set(&mut r);
        assert_eq!(refused(encode_messages_request(&r)), param);
    }
    // Zero penalties and no top alternatives change nothing.
    let mut r = anthropic_ok();
    r.presence_penalty = Some(0.0);
    r.top_logprobs = Some(0);
    encode_messages_request(&r).expect("accepted");
}

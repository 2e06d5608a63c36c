use serde_json::{json, Value};
use windlass_engine::{ModelRequest, ModelTool, ModelToolChoice, ProviderError};
use windlass_protocol::{EmptyObject, Item, JsonSchemaFormat, ReasoningEffort, TextFormat};

use super::*;

fn encode(req: &ModelRequest) -> Value {
    encode_with(req, MaxTokensField::MaxTokens)
}

fn encode_with(req: &ModelRequest, field: MaxTokensField) -> Value {
    let body = encode_request(req, field).expect("encodes");
    let bytes = encode_body(req, field).expect("serializes");
    let value = serde_json::to_value(&body).expect("to value");
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).expect("json"),
        value
    );
    value
}

fn unsupported(req: &ModelRequest) -> (String, Option<String>) {
    match encode_request(req, MaxTokensField::MaxTokens) {
        Err(ProviderError::Unsupported { message, param }) => (message, param),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

fn req(transcript: Vec<Item>) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        transcript: transcript.into(),
        ..ModelRequest::default()
    }
}

#[test]
fn minimal_streaming_request() {
    let mut r = req(vec![Item::user_text("hi")]);
    r.stream = true;
    assert_eq!(
        encode(&r),
        json!({
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
    r.stream = false;
    let v = encode(&r);
    assert_eq!(v["stream"], false);
    assert!(v.get("stream_options").is_none());
}

fn tool(name: &str, parameters: Value) -> ModelTool {
    ModelTool {
        name: name.into(),
        description: None,
        parameters,
        strict: None,
    }
}

#[test]
fn tools_and_tool_choice() {
    let mut r = req(vec![Item::user_text("x")]);
    r.tools = vec![
        ModelTool {
            description: Some("weather".into()),
            strict: Some(true),
            ..tool(
                "w",
                json!({"type": "object", "properties": {"c": {"type": "string"}}}),
            )
        },
        tool("t", Value::Null),
    ]
    .into();
    r.parallel_tool_calls = Some(false);
    let v = encode(&r);
    assert_eq!(
        v["tools"],
        json!([
            {"type": "function", "function": {"name": "w", "description": "weather", "strict": true,
             "parameters": {"type": "object", "properties": {"c": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}}}}
        ])
    );
    assert_eq!(v["tool_choice"], "auto");
    assert_eq!(v["parallel_tool_calls"], false);
    for (choice, expected) in [
        (ModelToolChoice::None, json!("none")),
        (ModelToolChoice::Required, json!("required")),
        (
            ModelToolChoice::Function("w".into()),
            json!({"type": "function", "function": {"name": "w"}}),
        ),
    ] {
        r.tool_choice = choice;
        assert_eq!(encode(&r)["tool_choice"], expected);
    }
}

#[test]
fn no_tools_means_no_tool_fields() {
    let mut r = req(vec![Item::user_text("x")]);
    r.tool_choice = ModelToolChoice::Required;
    r.parallel_tool_calls = Some(true);
    let v = encode(&r);
    for key in ["tools", "tool_choice", "parallel_tool_calls"] {
        assert!(v.get(key).is_none(), "{key} present: {v}");
    }
}

#[test]
fn sampling_and_output_options() {
    let mut r = req(vec![Item::user_text("x")]);
    r.temperature = Some(0.5);
    r.top_p = Some(0.9);
    r.presence_penalty = Some(0.1);
    r.frequency_penalty = Some(0.2);
    r.max_output_tokens = Some(100);
    r.top_logprobs = Some(3);
    r.logprobs = true;
    r.reasoning_effort = Some(ReasoningEffort::High);
    r.user = Some("u1".into());
    let v = encode(&r);
    assert_eq!(v["temperature"], 0.5);
    assert_eq!(v["top_p"], 0.9);
    assert_eq!(v["presence_penalty"], 0.1);
    assert_eq!(v["frequency_penalty"], 0.2);
    assert_eq!(v["max_tokens"], 100);
    assert!(v.get("max_completion_tokens").is_none());
    assert_eq!(v["logprobs"], true);
    assert_eq!(v["top_logprobs"], 3);
    assert_eq!(v["reasoning_effort"], "high");
    assert_eq!(v["user"], "u1");

    let v = encode_with(&r, MaxTokensField::MaxCompletionTokens);
    assert_eq!(v["max_completion_tokens"], 100);
    assert!(v.get("max_tokens").is_none());
}

#[test]
fn unset_options_are_omitted() {
    let v = encode(&req(vec![Item::user_text("x")]));
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
}

#[test]
fn response_formats() {
    let mut r = req(vec![Item::user_text("x")]);
    r.text_format = Some(TextFormat::Text(EmptyObject {}));
    assert!(encode(&r).get("response_format").is_none());
    r.text_format = Some(TextFormat::JsonObject(EmptyObject {}));
    assert_eq!(
        encode(&r)["response_format"],
        json!({"type": "json_object"})
    );
    r.text_format = Some(TextFormat::JsonSchema(JsonSchemaFormat {
        name: "out".into(),
        description: Some("d".into()),
        schema: json!({"type": "object"}),
        strict: Some(true),
    }));
    assert_eq!(
        encode(&r)["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "out", "description": "d", "schema": {"type": "object"}, "strict": true
        }})
    );
    r.text_format = Some(TextFormat::JsonSchema(JsonSchemaFormat {
        name: "out".into(),
        description: None,
        schema: json!({"type": "object"}),
        strict: None,
    }));
    assert_eq!(
        encode(&r)["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "out", "schema": {"type": "object"}}})
    );
    r.text_format = Some(TextFormat::Unknown(json!({"type": "grammar"})));
    let (message, param) = unsupported(&r);
    assert!(message.contains("grammar"), "{message}");
    assert_eq!(param.as_deref(), Some("text.format"));
}

#[test]
fn stop_sequences_and_top_k_go_up_under_their_chat_names() {
    let mut r = req(vec![Item::user_text("hi")]);
    let plain = encode(&r);
    assert!(plain.get("stop").is_none() && plain.get("top_k").is_none());
    r.stop = vec!["END".into(), "\n\n".into()];
    r.top_k = Some(40);
    let body = encode(&r);
    assert_eq!(body["stop"], json!(["END", "\n\n"]));
    assert_eq!(body["top_k"], 40);
}

//! What every answer must look like: OpenAI's error shape, the fields of a
//! response, and readers of a response's output items.

use serde_json::Value;

/// The 31 fields OpenResponses' `ResponseResource` marks as required.
pub const REQUIRED_RESPONSE_FIELDS: [&str; 31] = [
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "incomplete_details",
    "model",
    "previous_response_id",
    "instructions",
    "output",
    "error",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "reasoning",
    "usage",
    "max_output_tokens",
    "max_tool_calls",
    "store",
    "background",
    "service_tier",
    "metadata",
    "safety_identifier",
    "prompt_cache_key",
];

/// Checks `{"error":{"message","type","param","code"}}` (all four keys
/// present; message and type non-empty strings; param and code string or
/// null) and returns the inner error object.
pub fn assert_error_shape(body: &Value) -> &Value {
    let err = body
        .get("error")
        .unwrap_or_else(|| panic!("no `error` object in {body}"));
    let obj = err
        .as_object()
        .unwrap_or_else(|| panic!("`error` is not an object: {body}"));
    for key in ["message", "type", "param", "code"] {
        assert!(obj.contains_key(key), "error.{key} missing in {body}");
    }
    assert!(
        err["message"].as_str().is_some_and(|s| !s.is_empty()),
        "error.message must be a non-empty string: {body}"
    );
    assert!(
        err["type"].as_str().is_some_and(|s| !s.is_empty()),
        "error.type must be a non-empty string: {body}"
    );
    assert!(
        err["param"].is_null() || err["param"].is_string(),
        "error.param must be string or null: {body}"
    );
    assert!(
        err["code"].is_null() || err["code"].is_string(),
        "error.code must be string or null: {body}"
    );
    err
}

/// Asserts the status and the error shape; returns the inner error object.
pub fn assert_api_error(status: u16, body: &Value, expected: u16) -> Value {
    assert_eq!(status, expected, "status; body: {body}");
    assert_error_shape(body).clone()
}

/// The `type`s of a response's output items.
pub fn output_types(response: &Value) -> Vec<String> {
    response["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no output array: {response}"))
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// [`output_types`] of a response that called two tools one after the
/// other, then answered.
pub const TWO_CALLS_THEN_ANSWER: [&str; 5] = [
    "function_call",
    "function_call_output",
    "function_call",
    "function_call_output",
    "message",
];

/// The output items of a response (none when it has no output array).
pub fn output(resp: &Value) -> Vec<Value> {
    resp["output"].as_array().cloned().unwrap_or_default()
}

/// The output items of type `kind`.
pub fn outputs_of(resp: &Value, kind: &str) -> Vec<Value> {
    output(resp)
        .into_iter()
        .filter(|i| i["type"] == kind)
        .collect()
}

/// The one output item of `kind`.
pub fn only(resp: &Value, kind: &str) -> Value {
    let items: Vec<&Value> = resp["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no output: {resp}"))
        .iter()
        .filter(|i| i["type"] == kind)
        .collect();
    assert_eq!(items.len(), 1, "expected one {kind} in {resp}");
    items[0].clone()
}

/// The text of the last assistant message of the output.
pub fn final_text(resp: &Value) -> String {
    outputs_of(resp, "message")
        .last()
        .map(|m| {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

//! Unit tests of the request pre-check.

use serde_json::json;

use super::*;

fn small() -> RequestLimits {
    RequestLimits {
        max_input_items: 3,
        max_content_parts: 2,
        max_tools: 2,
        max_string_bytes: 16,
        max_depth: 6,
        max_metadata_pairs: 2,
        max_metadata_key_chars: 4,
        max_metadata_value_chars: 5,
    }
}

fn violation(body: serde_json::Value) -> Violation {
    check(body.to_string().as_bytes(), &small()).unwrap_err()
}

#[test]
fn each_limit_names_its_field() {
    let v = violation(json!({"input": ["a", "b", "c", "d", "e"]}));
    assert_eq!(
        (v.param.as_str(), v.code),
        ("input", "array_above_max_length")
    );
    assert!(v.message.contains("length 5"), "{}", v.message);
    let item = json!({"role": "user", "content": [{}, {}, {}]});
    let v = violation(json!({"input": [{}, item]}));
    assert_eq!(v.param, "input[1].content");
    let v = violation(json!({"input": [{"content": [{"text": "x".repeat(17)}]}]}));
    assert_eq!(
        (v.param.as_str(), v.code),
        ("input[0].content[0].text", "string_above_max_length")
    );
    assert_eq!(violation(json!({"tools": [{}, {}, {}]})).param, "tools");
    assert_eq!(
        violation(json!({"instructions": "y".repeat(17)})).param,
        "instructions"
    );
    let v = violation(json!({"metadata": {"a": "1", "b": "2", "c": "3"}}));
    assert_eq!(
        (v.param.as_str(), v.code),
        ("metadata", "object_above_max_properties")
    );
    assert_eq!(
        violation(json!({"metadata": {"long_key": "1"}})).param,
        "metadata"
    );
    assert_eq!(
        violation(json!({"metadata": {"k": "123456"}})).param,
        "metadata.k"
    );
    let v = violation(json!({"text": {"format": {"schema": {"a": {"b": {"c": {"d": {}}}}}}}}));
    assert_eq!(
        (v.param.as_str(), v.code),
        ("text.format.schema.a.b.c", "nesting_too_deep")
    );
}

#[test]
fn object_parameters_must_be_objects() {
    for (body, param) in [
        (json!({"text": []}), "text"),
        (json!({"reasoning": "high"}), "reasoning"),
        (json!({"metadata": [1]}), "metadata"),
        (json!({"stream_options": true}), "stream_options"),
    ] {
        let v = violation(body);
        assert_eq!((v.param.as_str(), v.code), (param, "invalid_type"));
    }
    let ok = json!({"text": {"format": {"type": "text"}}, "reasoning": null});
    assert_eq!(check(ok.to_string().as_bytes(), &small()), Ok(()));
}

#[test]
fn credentials_in_urls_are_refused_without_echo() {
    let v = violation(json!({"tools": [{"type": "mcp", "server_url": "s://u:p@h/"}]}));
    assert_eq!(
        (v.param.as_str(), v.code),
        ("tools[0].server_url", "credentials_in_url")
    );
    assert!(!v.message.contains("u:p"), "{}", v.message);
    assert!(has_credentials("https://token@host:1/x"));
    assert!(!has_credentials("https://host/a@b?c=d@e"));
    assert!(!has_credentials("data:image/png;base64,a@b"));
}

#[test]
fn requests_within_limits_and_invalid_json_pass() {
    let ok = json!({"input": ["a", {"content": [{"text": "hi"}]}], "metadata": {"k": "v"}, "tools": [{}]});
    assert_eq!(check(ok.to_string().as_bytes(), &small()), Ok(()));
    assert_eq!(check(b"{\"input\": [", &small()), Ok(()));
    assert_eq!(check(b"not json", &small()), Ok(()));
    // A long key outside metadata is still a string.
    let v = violation(json!({"x": {"k".repeat(17): 1}}));
    assert_eq!(v.code, "string_above_max_length");
}

//! Property tests over request parsing: the pre-check and the typed parse
//! never panic on any input, refuse exactly what passes a limit, and name
//! the field.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use proptest::prelude::*;
use serde_json::{json, Value};
use windlass_protocol::CreateResponseRequest;
use windlass_server::limits::{check, RequestLimits};

fn limits() -> RequestLimits {
    RequestLimits {
        max_input_items: 8,
        max_content_parts: 4,
        max_tools: 3,
        max_string_bytes: 40,
        max_depth: 10,
        ..RequestLimits::default()
    }
}

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,60}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A request body with the fields the limits look at, of random sizes.
fn request() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec("[a-z ]{0,50}", 0..12),
        0usize..6,
        any_json(),
    )
        .prop_map(|(texts, tools, extra)| {
            let input: Vec<Value> = texts
                .iter()
                .map(|t| json!({"role": "user", "content": t}))
                .collect();
            let tools: Vec<Value> = (0..tools)
                .map(|i| json!({"type": "function", "name": format!("f{i}")}))
                .collect();
            json!({"model": "m", "input": input, "tools": tools, "extra": extra})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = check(&bytes, &limits());
        let _ = serde_json::from_slice::<CreateResponseRequest>(&bytes);
    }

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        let body = value.to_string();
        let _ = check(body.as_bytes(), &limits());
        let _ = serde_json::from_str::<CreateResponseRequest>(&body);
    }

    /// Refused exactly when a limit is passed, naming a field at fault.
    #[test]
    fn refusals_match_the_limits(body in request()) {
        let lim = limits();
        let input = body["input"].as_array().map_or(0, Vec::len);
        let tools = body["tools"].as_array().map_or(0, Vec::len);
        let long_text = body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["content"].as_str().is_some_and(|t| t.len() > lim.max_string_bytes));
        let extra = json!({"extra": body["extra"]}).to_string();
        let mut faults: Vec<&str> = Vec::new();
        if input > lim.max_input_items {
            faults.push("input");
        }
        if long_text {
            faults.push("input[");
        }
        if tools > lim.max_tools {
            faults.push("tools");
        }
        if check(extra.as_bytes(), &lim).is_err() {
            faults.push("extra");
        }
        match check(body.to_string().as_bytes(), &lim) {
            Ok(()) => prop_assert!(faults.is_empty(), "passed despite {:?}", faults),
            Err(v) => prop_assert!(
                faults.iter().any(|f| v.param.starts_with(f)),
                "{:?} not among {:?}", v, faults
            ),
        }
    }
}

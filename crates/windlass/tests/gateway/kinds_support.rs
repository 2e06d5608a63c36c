//! The upstream kinds the loop tests run through, and how to read each
//! kind's request body (what Windlass sent the fake upstream).

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use windlass_engine::ToolExecutor;
use windlass_providers::UpstreamKind;
use windlass_testkit::{Gateway, GatewayOptions};

pub(crate) const KINDS: [UpstreamKind; 3] = [
    UpstreamKind::Chat,
    UpstreamKind::Responses,
    UpstreamKind::Anthropic,
];

pub(crate) const UPSTREAM_KEY: &str = "sk-upstream-test";

pub(crate) async fn gateway(kind: UpstreamKind, executors: Vec<Arc<dyn ToolExecutor>>) -> Gateway {
    let mut opts = GatewayOptions {
        kind,
        executors,
        // These tests check the explicit pause state on every kind.
        ..GatewayOptions::requires_action()
    };
    opts.provider.api_key = Some(UPSTREAM_KEY.to_owned());
    opts.provider.idle_timeout = Duration::from_secs(10);
    Gateway::start_with(opts).await
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// Every `(call_id, name)` the request replays, in order.
pub(crate) fn sent_calls(kind: UpstreamKind, req: &Value) -> Vec<(String, String)> {
    match kind {
        UpstreamKind::Chat => arr(&req["messages"])
            .iter()
            .flat_map(|m| arr(&m["tool_calls"]))
            .map(|c| (s(&c["id"]), s(&c["function"]["name"])))
            .collect(),
        UpstreamKind::Responses => arr(&req["input"])
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(|c| (s(&c["call_id"]), s(&c["name"])))
            .collect(),
        UpstreamKind::Anthropic => blocks(req, "tool_use")
            .map(|b| (s(&b["id"]), s(&b["name"])))
            .collect(),
    }
}

/// Every `(call_id, output text)` the request replays, in order.
pub(crate) fn sent_results(kind: UpstreamKind, req: &Value) -> Vec<(String, String)> {
    match kind {
        UpstreamKind::Chat => arr(&req["messages"])
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| (s(&m["tool_call_id"]), s(&m["content"])))
            .collect(),
        UpstreamKind::Responses => arr(&req["input"])
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|o| (s(&o["call_id"]), s(&o["output"])))
            .collect(),
        UpstreamKind::Anthropic => blocks(req, "tool_result")
            .map(|b| (s(&b["tool_use_id"]), s(&b["content"][0]["text"])))
            .collect(),
    }
}

/// Anthropic content blocks of `kind` across all messages.
pub(crate) fn blocks<'a>(req: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    arr(&req["messages"])
        .iter()
        .flat_map(|m| arr(&m["content"]))
        .filter(move |b| b["type"] == kind)
}

/// Checks the request is in the kind's own wire format.
pub(crate) fn assert_wire_format(kind: UpstreamKind, gw: &Gateway) {
    let req = gw.upstream.last_recorded_request().expect("a request");
    let body = &req.body;
    match kind {
        UpstreamKind::Chat => {
            assert!(body["messages"].is_array(), "{body}");
            assert_eq!(
                req.header("authorization"),
                Some(format!("Bearer {UPSTREAM_KEY}").as_str())
            );
        }
        UpstreamKind::Responses => {
            assert!(body["input"].is_array(), "{body}");
            assert_eq!(body["store"], false, "{body}");
            assert_eq!(body["include"][0], "reasoning.encrypted_content");
            assert_eq!(
                req.header("authorization"),
                Some(format!("Bearer {UPSTREAM_KEY}").as_str())
            );
        }
        UpstreamKind::Anthropic => {
            assert!(body["messages"].is_array(), "{body}");
            assert!(body["max_tokens"].is_u64(), "{body}");
            assert_eq!(req.header("x-api-key"), Some(UPSTREAM_KEY));
            assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(req.header("authorization"), None);
        }
    }
}

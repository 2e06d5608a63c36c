//! Foundation acceptance: text, reasoning and single-shot tool calls over
//! JSON and SSE; usage; what the upstream is sent; the response resource.

use serde_json::{json, Value};
use windlass_testkit::check::{output_types, REQUIRED_RESPONSE_FIELDS};
use windlass_testkit::{
    Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, SseCapture, ToolCallSpec,
};

/// A gateway with no executors at all: tool calls are returned (single-shot).
async fn bare_gateway() -> Gateway {
    Gateway::start_with(GatewayOptions {
        client_functions: false,
        ..Default::default()
    })
    .await
}

fn n_deltas(text: &str, chunk: usize) -> usize {
    text.chars().count().div_ceil(chunk)
}

fn repeat(t: &'static str, n: usize) -> impl Iterator<Item = &'static str> {
    std::iter::repeat_n(t, n)
}

fn message_text(item: &Value) -> String {
    item["content"]
        .as_array()
        .unwrap_or_else(|| panic!("message content is not an array: {item}"))
        .iter()
        .filter(|p| p["type"] == "output_text")
        .map(|p| p["text"].as_str().unwrap_or_default())
        .collect()
}

fn concat_deltas(cap: &SseCapture, event: &str) -> String {
    cap.of_type(event)
        .iter()
        .map(|e| e["delta"].as_str().expect("delta"))
        .collect()
}

// ---------------------------------------------------------------- plain text

#[tokio::test]
async fn plain_text_json() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("Hello there, Alice").usage(7, 3));
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["object"], "response");
    assert_eq!(r["status"], "completed");
    assert!(r["id"].as_str().unwrap().starts_with("resp"), "{r}");
    assert_eq!(output_types(&r), ["message"]);
    let msg = &r["output"][0];
    assert_eq!(msg["role"], "assistant");
    assert_eq!(msg["status"], "completed");
    assert!(msg["id"].as_str().is_some_and(|s| !s.is_empty()), "{msg}");
    assert_eq!(msg["content"][0]["type"], "output_text");
    assert_eq!(message_text(msg), "Hello there, Alice");
    assert_eq!(r["usage"]["input_tokens"], 7);
    assert_eq!(r["usage"]["output_tokens"], 3);
    assert_eq!(r["usage"]["total_tokens"], 10);
    assert_eq!(gw.upstream.request_count(), 1);
    // A JSON request is answered with a non-streamed upstream call.
    assert_eq!(gw.upstream.last_request().unwrap()["stream"], false);
}

#[tokio::test]
async fn plain_text_sse_exact_grammar() {
    let gw = Gateway::start().await;
    let text = "Hello there, Alice";
    gw.upstream
        .push(Reply::text(text).chunk_chars(5).usage(7, 3));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ];
    expected.extend(repeat("response.output_text.delta", n_deltas(text, 5)));
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(cap.types(), expected);
    assert_eq!(concat_deltas(&cap, "response.output_text.delta"), text);
    let fin = cap.final_response();
    assert_eq!(fin["status"], "completed");
    assert_eq!(message_text(&fin["output"][0]), text);
    assert_eq!(fin["usage"]["total_tokens"], 10);
    // The created / in_progress snapshots have no output and no usage yet.
    let created = &cap.events[0].1["response"];
    assert_eq!(created["output"], json!([]));
    assert!(created["usage"].is_null(), "{created}");
    assert_eq!(created["id"], fin["id"]);
    // Item ids are stable from added to done and in every delta.
    let item_id = &cap.of_type("response.output_item.added")[0]["item"]["id"];
    for d in cap.of_type("response.output_text.delta") {
        assert_eq!(&d["item_id"], item_id);
        assert_eq!(d["output_index"], 0);
        assert_eq!(d["content_index"], 0);
    }
    assert_eq!(&fin["output"][0]["id"], item_id);
    // The upstream was asked for a stream.
    assert_eq!(gw.upstream.last_request().unwrap()["stream"], true);
}

// ----------------------------------------------------------------- reasoning

#[tokio::test]
async fn reasoning_json_is_a_reasoning_item_before_the_message() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("42").reasoning("Let me think about it."));
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "answer?"}))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(output_types(&r), ["reasoning", "message"]);
    let reasoning = &r["output"][0];
    assert!(reasoning["id"].as_str().is_some_and(|s| !s.is_empty()));
    let content = reasoning["content"].as_array().expect("reasoning content");
    assert_eq!(content.len(), 1, "{reasoning}");
    assert_eq!(content[0]["type"], "reasoning_text");
    assert_eq!(content[0]["text"], "Let me think about it.");
    assert_eq!(message_text(&r["output"][1]), "42");
    assert_ne!(r["output"][0]["id"], r["output"][1]["id"]);
}

#[tokio::test]
async fn reasoning_sse_exact_grammar() {
    let gw = Gateway::start().await;
    let reasoning = "Think about it";
    let text = "The answer";
    gw.upstream
        .push(Reply::text(text).reasoning(reasoning).chunk_chars(5));
    let cap = gw.stream(&json!({"model": "m", "input": "answer?"})).await;
    cap.assert_well_formed();
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ];
    expected.extend(repeat("response.reasoning.delta", n_deltas(reasoning, 5)));
    expected.extend([
        "response.reasoning.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
    ]);
    expected.extend(repeat("response.output_text.delta", n_deltas(text, 5)));
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(cap.types(), expected);
    assert_eq!(concat_deltas(&cap, "response.reasoning.delta"), reasoning);
    assert_eq!(concat_deltas(&cap, "response.output_text.delta"), text);
    for d in cap.of_type("response.reasoning.delta") {
        assert_eq!(d["output_index"], 0);
    }
    for d in cap.of_type("response.output_text.delta") {
        assert_eq!(d["output_index"], 1);
    }
    let added = cap.of_type("response.output_item.added");
    assert_eq!(added[0]["item"]["type"], "reasoning");
    assert_eq!(added[1]["item"]["type"], "message");
    let fin = cap.final_response();
    assert_eq!(output_types(fin), ["reasoning", "message"]);
    assert_eq!(fin["output"][0]["content"][0]["type"], "reasoning_text");
    assert_eq!(fin["output"][0]["content"][0]["text"], reasoning);
}

// ------------------------------------------------- single-shot tool calls

fn weather_tools() -> Value {
    json!([
        {"type": "function", "name": "get_weather", "description": "Weather of a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
    ])
}

fn two_calls() -> Reply {
    Reply::tool_calls(vec![
        ToolCallSpec::new("get_weather", r#"{"city":"Paris"}"#).id("call_a"),
        ToolCallSpec::new("get_time", r#"{"tz":"Europe/Paris"}"#).id("call_b"),
    ])
}

fn assert_two_calls(r: &Value) {
    assert_eq!(r["status"], "completed", "{r}");
    assert!(r["incomplete_details"].is_null(), "{r}");
    assert_eq!(output_types(r), ["function_call", "function_call"]);
    let a = &r["output"][0];
    let b = &r["output"][1];
    assert_eq!(a["call_id"], "call_a");
    assert_eq!(a["name"], "get_weather");
    assert_eq!(a["arguments"], r#"{"city":"Paris"}"#);
    assert_eq!(a["status"], "completed");
    assert_eq!(b["call_id"], "call_b");
    assert_eq!(b["name"], "get_time");
    assert_eq!(b["arguments"], r#"{"tz":"Europe/Paris"}"#);
    assert_eq!(b["status"], "completed");
    assert!(a["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_ne!(a["id"], b["id"]);
}

#[tokio::test]
async fn tool_calls_without_executors_json_single_shot_completed() {
    let gw = bare_gateway().await;
    gw.upstream.push(two_calls());
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "weather and time?", "tools": weather_tools()}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_two_calls(&r);
    // Single-shot: exactly one model call, nothing executed.
    assert_eq!(gw.upstream.request_count(), 1);
}

#[tokio::test]
async fn tool_calls_without_executors_sse_single_shot_completed() {
    let gw = bare_gateway().await;
    gw.upstream.push(two_calls().chunk_chars(6));
    let cap = gw
        .stream(&json!({"model": "m", "input": "weather and time?", "tools": weather_tools()}))
        .await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.completed");
    let fin = cap.final_response();
    assert_two_calls(fin);
    // Each call: added, argument deltas that concatenate, arguments.done, done.
    let added = cap.of_type("response.output_item.added");
    assert_eq!(added.len(), 2);
    for (i, (call_id, args)) in [
        ("call_a", r#"{"city":"Paris"}"#),
        ("call_b", r#"{"tz":"Europe/Paris"}"#),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(added[i]["item"]["type"], "function_call");
        assert_eq!(added[i]["item"]["call_id"], *call_id);
        let deltas: String = cap
            .of_type("response.function_call_arguments.delta")
            .iter()
            .filter(|d| d["output_index"] == i)
            .map(|d| d["delta"].as_str().unwrap())
            .collect();
        assert_eq!(deltas, *args);
        let done: Vec<_> = cap
            .of_type("response.function_call_arguments.done")
            .into_iter()
            .filter(|d| d["output_index"] == i)
            .collect();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["arguments"], *args);
        assert_eq!(done[0]["item_id"], added[i]["item"]["id"]);
        // arguments.done comes before the item's output_item.done.
        let pos = |t: &str| {
            cap.events
                .iter()
                .position(|(n, d)| n == t && d["output_index"] == i)
                .unwrap()
        };
        assert!(
            pos("response.function_call_arguments.done") < pos("response.output_item.done"),
            "{:?}",
            cap.types()
        );
    }
    assert_eq!(cap.of_type("response.output_text.delta").len(), 0);
    assert_eq!(gw.upstream.request_count(), 1);
}

// --------------------------------------------------------------------- usage

#[tokio::test]
async fn usage_details_are_mapped() {
    let gw = Gateway::start().await;
    gw.upstream.push(
        Reply::text("ok")
            .reasoning("hmm")
            .usage(100, 40)
            .cached_tokens(64)
            .reasoning_tokens(25),
    );
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200, "{r}");
    let u = &r["usage"];
    assert_eq!(u["input_tokens"], 100);
    assert_eq!(u["output_tokens"], 40);
    assert_eq!(u["total_tokens"], 140);
    assert_eq!(u["input_tokens_details"]["cached_tokens"], 64);
    assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 25);
}

async fn summed_usage_gateway() -> (Gateway, MockExecutor) {
    let mock = MockExecutor::new().tool("add", MockBehavior::Ok("3".into()));
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![mock.arc()],
        ..Default::default()
    })
    .await;
    (gw, mock)
}

fn summed_usage_script(gw: &Gateway) {
    gw.upstream.push(
        Reply::tool_call("add", r#"{"a":1,"b":2}"#)
            .usage(10, 5)
            .cached_tokens(3)
            .reasoning_tokens(2),
    );
    gw.upstream.push(
        Reply::text("1 + 2 = 3")
            .usage(20, 7)
            .cached_tokens(4)
            .reasoning_tokens(1),
    );
}

fn assert_summed(u: &Value) {
    assert_eq!(u["input_tokens"], 30, "{u}");
    assert_eq!(u["output_tokens"], 12, "{u}");
    assert_eq!(u["total_tokens"], 42, "{u}");
    assert_eq!(u["input_tokens_details"]["cached_tokens"], 7, "{u}");
    assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 3, "{u}");
}

#[tokio::test]
async fn usage_is_summed_over_turns_json() {
    let (gw, mock) = summed_usage_gateway().await;
    summed_usage_script(&gw);
    let body = json!({"model": "m", "input": "1+2?",
        "tools": [{"type": "function", "name": "add", "parameters": {"type": "object"}}]});
    let (status, r) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(mock.calls().len(), 1);
    assert_eq!(gw.upstream.request_count(), 2);
    assert_summed(&r["usage"]);
}

#[tokio::test]
async fn usage_is_summed_over_turns_sse() {
    let (gw, _mock) = summed_usage_gateway().await;
    summed_usage_script(&gw);
    let body = json!({"model": "m", "input": "1+2?",
        "tools": [{"type": "function", "name": "add", "parameters": {"type": "object"}}]});
    let cap = gw.stream(&body).await;
    cap.assert_well_formed();
    assert_eq!(cap.final_response()["status"], "completed");
    assert_summed(&cap.final_response()["usage"]);
}

// ------------------------------------------------- what the upstream is sent

fn mapping_request() -> Value {
    json!({
        "model": "my-model",
        "instructions": "You are terse.",
        "input": "What is the weather in Paris?",
        "tools": weather_tools(),
        "tool_choice": {"type": "function", "name": "get_weather"},
        "temperature": 0.3,
        "top_p": 0.9,
        "max_output_tokens": 123,
        "text": {"format": {"type": "json_schema", "name": "weather",
                  "schema": {"type": "object", "properties": {"t": {"type": "number"}}},
                  "strict": true}}
    })
}

fn assert_mapped(sent: &Value) {
    assert_eq!(sent["model"], "my-model", "{sent}");
    let msgs = sent["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 2, "{sent}");
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[0]["content"], "You are terse.");
    assert_eq!(msgs[1]["role"], "user");
    assert_eq!(msgs[1]["content"], "What is the weather in Paris?");
    let tools = sent["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 2, "{sent}");
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "get_weather");
    assert_eq!(tools[0]["function"]["description"], "Weather of a city");
    assert_eq!(
        tools[0]["function"]["parameters"],
        json!({"type": "object", "properties": {"city": {"type": "string"}}})
    );
    assert_eq!(tools[1]["function"]["name"], "get_time");
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "function", "function": {"name": "get_weather"}})
    );
    assert_eq!(sent["temperature"], 0.3);
    assert_eq!(sent["top_p"], 0.9);
    assert_eq!(sent["max_tokens"], 123);
    assert_eq!(sent["response_format"]["type"], "json_schema", "{sent}");
    let js = &sent["response_format"]["json_schema"];
    assert_eq!(js["name"], "weather");
    assert_eq!(
        js["schema"],
        json!({"type": "object", "properties": {"t": {"type": "number"}}})
    );
    assert_eq!(js["strict"], true);
}

#[tokio::test]
async fn upstream_request_mapping_json() {
    let gw = bare_gateway().await;
    gw.upstream.push(Reply::text(r#"{"t": 21}"#));
    let (status, r) = gw.post_json("/v1/responses", &mapping_request()).await;
    assert_eq!(status, 200, "{r}");
    let sent = gw.upstream.last_request().unwrap();
    assert_mapped(&sent);
    assert_eq!(sent["stream"], false);
    assert!(sent.get("stream_options").is_none(), "{sent}");
    // The response echoes what the request set.
    assert_eq!(r["instructions"], "You are terse.");
    assert_eq!(r["temperature"], 0.3);
    assert_eq!(r["top_p"], 0.9);
    assert_eq!(r["max_output_tokens"], 123);
    assert_eq!(r["text"]["format"]["type"], "json_schema");
    assert_eq!(r["text"]["format"]["name"], "weather");
    assert_eq!(
        r["tool_choice"],
        json!({"type": "function", "name": "get_weather"})
    );
    assert_eq!(r["tools"].as_array().unwrap().len(), 2);
    assert_eq!(r["tools"][0]["name"], "get_weather");
}

#[tokio::test]
async fn upstream_request_mapping_stream() {
    let gw = bare_gateway().await;
    gw.upstream.push(Reply::text(r#"{"t": 21}"#));
    let cap = gw.stream(&mapping_request()).await;
    cap.assert_well_formed();
    let sent = gw.upstream.last_request().unwrap();
    assert_mapped(&sent);
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true, "{sent}");
}

#[tokio::test]
async fn upstream_tool_choice_modes() {
    let gw = bare_gateway().await;
    for (choice, wire) in [
        (json!("required"), json!("required")),
        (json!("auto"), json!("auto")),
        (json!("none"), json!("none")),
    ] {
        gw.upstream.push(Reply::text("ok"));
        let (status, r) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "input": "hi", "tools": weather_tools(), "tool_choice": choice}),
            )
            .await;
        assert_eq!(status, 200, "{r}");
        let sent = gw.upstream.last_request().unwrap();
        assert_eq!(sent["tool_choice"], wire, "{choice}: {sent}");
        assert_eq!(r["tool_choice"], choice);
    }
    // No tools: neither tools nor tool_choice are sent.
    gw.upstream.push(Reply::text("ok"));
    let (status, _) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200);
    let sent = gw.upstream.last_request().unwrap();
    assert!(sent.get("tools").is_none(), "{sent}");
    assert!(sent.get("tool_choice").is_none(), "{sent}");
    assert!(sent.get("max_tokens").is_none(), "{sent}");
    assert!(sent.get("response_format").is_none(), "{sent}");
    assert!(sent.get("temperature").is_none(), "{sent}");
}

// ------------------------------------------------------ the response resource

fn assert_required_fields(r: &Value, ctx: &str) {
    let obj = r
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: not an object"));
    let missing: Vec<_> = REQUIRED_RESPONSE_FIELDS
        .iter()
        .filter(|f| !obj.contains_key(**f))
        .collect();
    assert!(missing.is_empty(), "{ctx}: missing {missing:?} in {r}");
    assert_eq!(r["object"], "response", "{ctx}");
    assert!(r["created_at"].is_u64(), "{ctx}");
    assert!(r["output"].is_array(), "{ctx}");
    assert!(r["tools"].is_array(), "{ctx}");
    assert!(r["parallel_tool_calls"].is_boolean(), "{ctx}");
    assert!(r["text"]["format"]["type"].is_string(), "{ctx}");
    for f in [
        "top_p",
        "presence_penalty",
        "frequency_penalty",
        "temperature",
    ] {
        assert!(r[f].is_number(), "{ctx}: {f} not a number: {r}");
    }
    assert!(r["top_logprobs"].is_u64(), "{ctx}");
    assert!(r["store"].is_boolean(), "{ctx}");
    assert_eq!(r["background"], false, "{ctx}");
    assert!(r["service_tier"].is_string(), "{ctx}");
    assert!(r["metadata"].is_object(), "{ctx}");
    assert!(
        r["truncation"] == "disabled" || r["truncation"] == "auto",
        "{ctx}"
    );
    // Nullable fields of a minimal request are present as null.
    for f in [
        "incomplete_details",
        "previous_response_id",
        "instructions",
        "error",
        "reasoning",
        "max_output_tokens",
        "max_tool_calls",
        "safety_identifier",
        "prompt_cache_key",
    ] {
        assert!(r[f].is_null(), "{ctx}: {f} should be null: {r}");
    }
}

#[tokio::test]
async fn response_has_all_31_required_fields_json_sse_and_get() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("hi"));
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
        .await;
    assert_eq!(status, 200, "{r}");
    assert_required_fields(&r, "JSON");
    assert!(r["completed_at"].as_u64().unwrap() >= r["created_at"].as_u64().unwrap());
    assert!(r["usage"].is_object());
    assert_eq!(r["tools"], json!([]));
    assert_eq!(r["metadata"], json!({}));
    assert_eq!(r["store"], true);
    assert_eq!(r["truncation"], "disabled");
    assert_eq!(r["text"]["format"], json!({"type": "text"}));

    let (s, got) = gw
        .get_json(&format!("/v1/responses/{}", r["id"].as_str().unwrap()))
        .await;
    assert_eq!(s, 200);
    assert_required_fields(&got, "GET");

    gw.upstream.push(Reply::text("hi"));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    for (name, data) in &cap.events {
        if let Some(resp) = data.get("response") {
            assert_required_fields(resp, name);
        }
    }
    let created = &cap.events[0].1["response"];
    assert!(created["completed_at"].is_null(), "{created}");
    assert!(created["usage"].is_null(), "{created}");
    assert_eq!(created["status"], "in_progress");
    assert!(cap.final_response()["completed_at"].is_u64());
}

#[tokio::test]
async fn request_fields_are_echoed_in_the_response() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("ok"));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "metadata": {"k": "v"},
                "max_tool_calls": 3, "safety_identifier": "u-1", "prompt_cache_key": "pck",
                "parallel_tool_calls": false, "presence_penalty": 0.5,
                "frequency_penalty": -0.5, "store": true}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["metadata"], json!({"k": "v"}));
    assert_eq!(r["max_tool_calls"], 3);
    assert_eq!(r["safety_identifier"], "u-1");
    assert_eq!(r["prompt_cache_key"], "pck");
    assert_eq!(r["parallel_tool_calls"], false);
    assert_eq!(r["presence_penalty"], 0.5);
    assert_eq!(r["frequency_penalty"], -0.5);
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(sent["presence_penalty"], 0.5);
    assert_eq!(sent["frequency_penalty"], -0.5);
    // Sent under its own name (docs/upstream-fields.md), not as `user`.
    assert_eq!(sent["safety_identifier"], "u-1");
    assert!(sent.get("user").is_none(), "{sent}");
}

// ------------------------------------------------------------- more shapes

#[tokio::test]
async fn length_finish_is_incomplete_max_output_tokens_json_and_sse() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("truncated answ").finish_reason("length"));
    let (s, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "max_output_tokens": 4}),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "incomplete");
    assert_eq!(r["incomplete_details"]["reason"], "max_output_tokens");
    assert_eq!(r["output"][0]["status"], "incomplete");
    assert_eq!(message_text(&r["output"][0]), "truncated answ");

    gw.upstream
        .push(Reply::text("truncated answ").finish_reason("length"));
    let cap = gw
        .stream(&json!({"model": "m", "input": "hi", "max_output_tokens": 4}))
        .await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.incomplete");
    let fin = cap.final_response();
    assert_eq!(fin["incomplete_details"]["reason"], "max_output_tokens");
}

#[tokio::test]
async fn multibyte_text_survives_chunking() {
    let gw = Gateway::start().await;
    let text = "héllo wörld — 日本語のテキスト 🎉🚀 ok";
    gw.upstream.push(Reply::text(text).chunk_chars(3));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    assert_eq!(concat_deltas(&cap, "response.output_text.delta"), text);
    assert_eq!(message_text(&cap.final_response()["output"][0]), text);
    gw.upstream.push(Reply::text(text));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "日本語"}))
        .await;
    assert_eq!(s, 200);
    assert_eq!(message_text(&r["output"][0]), text);
    let sent = gw.upstream.last_request().unwrap();
    assert_eq!(sent["messages"][0]["content"], "日本語");
}

#[tokio::test]
async fn roles_and_json_object_format_are_mapped() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("{}"));
    let (s, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "instructions": "sys",
            "text": {"format": {"type": "json_object"}},
            "input": [
                {"role": "developer", "content": "dev rule"},
                {"role": "system", "content": "sys rule"},
                {"role": "user", "content": "q1"},
                {"role": "assistant", "content": "a1"},
                {"role": "user", "content": "q2"}
            ]}),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    let sent = gw.upstream.last_request().unwrap();
    let roles: Vec<_> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        roles,
        ["system", "system", "system", "user", "assistant", "user"]
    );
    assert_eq!(sent["messages"][0]["content"], "sys");
    assert_eq!(sent["messages"][1]["content"], "dev rule");
    assert_eq!(sent["response_format"], json!({"type": "json_object"}));
    assert_eq!(r["text"]["format"]["type"], "json_object");
}

#[tokio::test]
async fn reasoning_of_a_previous_turn_is_not_sent_and_does_not_split_the_turn() {
    let gw = bare_gateway().await;
    gw.upstream.push(
        Reply::text("Checking.")
            .reasoning("think")
            .and_tool_calls([ToolCallSpec::new("f", "{}").id("call_r")]),
    );
    gw.upstream.push(Reply::text("done"));
    let tools = json!([{"type": "function", "name": "f"}]);
    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "go", "tools": tools}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    assert_eq!(output_types(&r1), ["reasoning", "message", "function_call"]);
    let (s, r2) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "tools": tools, "previous_response_id": r1["id"],
                "input": [{"type": "function_call_output", "call_id": "call_r", "output": "ok"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r2}");
    let sent = gw.upstream.last_request().unwrap();
    let m = sent["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "{sent}");
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["content"], "Checking.");
    assert_eq!(m[1]["tool_calls"][0]["id"], "call_r");
    assert_eq!(m[2]["role"], "tool");
}

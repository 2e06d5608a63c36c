//! Foundation acceptance: persistence on every path, `store: false`,
//! `previous_response_id` chains, restarts, input item listing, delete.

use serde_json::{json, Value};
use windlass_testkit::check::assert_api_error;
use windlass_testkit::db::{assert_db_empty, item_stored, stored_response_count, stored_statuses};
use windlass_testkit::live::LiveStream;
use windlass_testkit::{Gateway, GatewayOptions, Reply, ToolCallSpec};

fn id_of(r: &Value) -> String {
    r["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {r}"))
        .to_owned()
}

/// The text of a message item, whether its content is a string or parts.
fn item_text(item: &Value) -> String {
    match &item["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => panic!("unexpected content {other} in {item}"),
    }
}

/// `(role, content)` of each upstream chat message.
fn sent_messages(sent: &Value) -> Vec<(String, String)> {
    sent["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages: {sent}"))
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn msgs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

// ------------------------------------------------------------- persistence

#[tokio::test]
async fn json_response_is_persisted_and_get_equals_it() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("Bonjour").reasoning("French it is").usage(5, 2));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hello", "instructions": "Speak French",
                    "metadata": {"k": "v"}}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (s, got) = gw.get_json(&format!("/v1/responses/{}", id_of(&r))).await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(got, r, "GET differs from the JSON answer");
    assert_eq!(stored_response_count(&gw).unwrap_or(1), 1);
}

#[tokio::test]
async fn sse_response_is_persisted_and_get_equals_terminal_event() {
    let gw = Gateway::start().await;
    gw.upstream.push(
        Reply::text("Let me check.")
            .reasoning("need the weather")
            .and_tool_calls([ToolCallSpec::new("get_weather", r#"{"city":"Oslo"}"#)]),
    );
    let cap = gw
        .stream(&json!({"model": "m", "input": "weather in Oslo?",
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]}))
        .await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    let (s, got) = gw.get_json(&format!("/v1/responses/{}", id_of(fin))).await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(&got, fin, "GET differs from the terminal SSE response");
    assert_eq!(got["output"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn failed_stream_is_persisted_too() {
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::text("partial answer here").cut_after(3));
    let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    assert_eq!(fin["status"], "failed");
    let (s, got) = gw.get_json(&format!("/v1/responses/{}", id_of(fin))).await;
    assert_eq!(s, 200);
    assert_eq!(&got, fin);
}

// ------------------------------------------------------------- store: false

#[tokio::test]
async fn store_false_writes_nothing_json() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("not kept"));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "store": false,
                    "input": [{"type": "message", "id": "msg_probe_nostore_json",
                               "role": "user", "content": "secret"}]}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(r["store"], false);
    let id = id_of(&r);
    let (s, body) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_api_error(s, &body, 404);
    let (s, body) = gw
        .get_json(&format!("/v1/responses/{id}/input_items"))
        .await;
    assert_api_error(s, &body, 404);
    assert!(!item_stored(&gw, "msg_probe_nostore_json").await);
    assert_db_empty(&gw, "store:false JSON");

    let before = gw.upstream.request_count();
    let (s, body) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "again", "previous_response_id": id}),
        )
        .await;
    // OpenAI answers an unknown previous response with a 400 naming it.
    let err = assert_api_error(s, &body, 400);
    assert_eq!(err["param"], "previous_response_id");
    assert_eq!(gw.upstream.request_count(), before);
}

#[tokio::test]
async fn store_false_writes_nothing_sse() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("not kept"));
    let cap = gw
        .stream(&json!({"model": "m", "store": false,
                "input": [{"type": "message", "id": "msg_probe_nostore_sse",
                           "role": "user", "content": "secret"}]}))
        .await;
    cap.assert_well_formed();
    let fin = cap.final_response();
    assert_eq!(fin["status"], "completed");
    assert_eq!(fin["store"], false);
    let (s, body) = gw.get_json(&format!("/v1/responses/{}", id_of(fin))).await;
    assert_api_error(s, &body, 404);
    assert!(!item_stored(&gw, "msg_probe_nostore_sse").await);
    assert_db_empty(&gw, "store:false SSE");
    let (s, body) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "again", "previous_response_id": id_of(fin)}),
        )
        .await;
    assert_api_error(s, &body, 400);
}

// ------------------------------------------------------------------ chains

#[tokio::test]
async fn chain_of_three_sends_history_in_order_without_old_instructions() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("uno"));
    gw.upstream.push(Reply::text("dos"));
    gw.upstream.push(Reply::text("tres"));

    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "instructions": "Be A", "input": "one"}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    // The second link goes through SSE: chains work across surfaces.
    let cap = gw
        .stream(
            &json!({"model": "m", "instructions": "Be B", "input": "two",
                        "previous_response_id": id_of(&r1)}),
        )
        .await;
    cap.assert_well_formed();
    let r2 = cap.final_response().clone();
    assert_eq!(r2["previous_response_id"], r1["id"]);
    assert_eq!(r2["instructions"], "Be B");
    let (s, r3) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "three", "previous_response_id": id_of(&r2)}),
        )
        .await;
    assert_eq!(s, 200, "{r3}");
    assert_eq!(r3["previous_response_id"], r2["id"]);
    assert!(r3["instructions"].is_null(), "{r3}");

    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        sent_messages(&reqs[0]),
        msgs(&[("system", "Be A"), ("user", "one")])
    );
    assert_eq!(
        sent_messages(&reqs[1]),
        msgs(&[
            ("system", "Be B"),
            ("user", "one"),
            ("assistant", "uno"),
            ("user", "two")
        ])
    );
    assert_eq!(
        sent_messages(&reqs[2]),
        msgs(&[
            ("user", "one"),
            ("assistant", "uno"),
            ("user", "two"),
            ("assistant", "dos"),
            ("user", "three")
        ])
    );
}

#[tokio::test]
async fn chain_carries_tool_calls_and_outputs() {
    // Single-shot client call, then its output sent as the continuation.
    let gw = Gateway::start().await;
    gw.upstream
        .push(Reply::tool_call("lookup", r#"{"q":"x"}"#).with_call_id("call_77"));
    gw.upstream.push(Reply::text("found it"));
    let tools = json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]);
    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "find x", "tools": tools}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    assert_eq!(r1["output"][0]["call_id"], "call_77");
    let (s, r2) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "previous_response_id": id_of(&r1), "tools": tools,
                    "input": [{"type": "function_call_output", "call_id": "call_77",
                               "output": "x is 5"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r2}");
    assert_eq!(r2["status"], "completed");
    let sent = gw.upstream.last_request().unwrap();
    let m = sent["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "{sent}");
    assert_eq!(m[0]["role"], "user");
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["tool_calls"][0]["id"], "call_77");
    assert_eq!(m[1]["tool_calls"][0]["function"]["name"], "lookup");
    assert_eq!(m[2]["role"], "tool");
    assert_eq!(m[2]["tool_call_id"], "call_77");
    assert_eq!(m[2]["content"], "x is 5");
}

#[tokio::test]
async fn restart_keeps_responses_and_chains() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("Hello Alice"));
    let (s, r1) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "I am Alice"}),
        )
        .await;
    assert_eq!(s, 200, "{r1}");
    gw.upstream.push(Reply::text("streamed"));
    let cap = gw
        .stream(&json!({"model": "m", "input": "and stream", "previous_response_id": id_of(&r1)}))
        .await;
    cap.assert_well_formed();
    let r2 = cap.final_response().clone();

    let gw = gw.restart().await;
    let (s, got1) = gw.get_json(&format!("/v1/responses/{}", id_of(&r1))).await;
    assert_eq!(s, 200, "{got1}");
    assert_eq!(got1, r1);
    let (s, got2) = gw.get_json(&format!("/v1/responses/{}", id_of(&r2))).await;
    assert_eq!(s, 200, "{got2}");
    assert_eq!(got2, r2);
    let (s, items) = gw
        .get_json(&format!("/v1/responses/{}/input_items", id_of(&r2)))
        .await;
    assert_eq!(s, 200, "{items}");
    assert_eq!(items["data"].as_array().unwrap().len(), 1);
    assert_eq!(item_text(&items["data"][0]), "and stream");

    gw.upstream.push(Reply::text("You are Alice"));
    let (s, r3) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "Who am I?", "previous_response_id": id_of(&r2)}),
        )
        .await;
    assert_eq!(s, 200, "{r3}");
    assert_eq!(
        sent_messages(&gw.upstream.last_request().unwrap()),
        msgs(&[
            ("user", "I am Alice"),
            ("assistant", "Hello Alice"),
            ("user", "and stream"),
            ("assistant", "streamed"),
            ("user", "Who am I?")
        ])
    );
}

// ------------------------------------------------------------- input items

async fn five_inputs(gw: &Gateway) -> (Value, Vec<String>) {
    gw.upstream.push(Reply::text("ok"));
    let input: Vec<Value> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|t| json!({"role": "user", "content": t}))
        .collect();
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": input}))
        .await;
    assert_eq!(s, 200, "{r}");
    let (s, all) = gw
        .get_json(&format!(
            "/v1/responses/{}/input_items?order=asc",
            id_of(&r)
        ))
        .await;
    assert_eq!(s, 200, "{all}");
    let ids = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().expect("input item id").to_owned())
        .collect();
    (r, ids)
}

fn page_texts(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data: {page}"))
        .iter()
        .map(item_text)
        .collect()
}

#[tokio::test]
async fn input_items_list_order_and_pagination() {
    let gw = Gateway::start().await;
    let (r, ids) = five_inputs(&gw).await;
    let id = id_of(&r);
    assert_eq!(ids.len(), 5);
    let base = format!("/v1/responses/{id}/input_items");

    // Default: newest first (desc), all five, no more.
    let (s, p) = gw.get_json(&base).await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["object"], "list");
    assert_eq!(page_texts(&p), ["e", "d", "c", "b", "a"]);
    assert_eq!(p["has_more"], false);
    assert_eq!(p["first_id"], ids[4]);
    assert_eq!(p["last_id"], ids[0]);
    for item in p["data"].as_array().unwrap() {
        assert_eq!(item["type"], "message", "{item}");
        assert_eq!(item["role"], "user", "{item}");
    }

    // Ascending pages of two, following `after`.
    let (s, p1) = gw.get_json(&format!("{base}?order=asc&limit=2")).await;
    assert_eq!(s, 200, "{p1}");
    assert_eq!(page_texts(&p1), ["a", "b"]);
    assert_eq!(p1["has_more"], true);
    assert_eq!(p1["first_id"], ids[0]);
    assert_eq!(p1["last_id"], ids[1]);
    let (s, p2) = gw
        .get_json(&format!("{base}?order=asc&limit=2&after={}", ids[1]))
        .await;
    assert_eq!(s, 200, "{p2}");
    assert_eq!(page_texts(&p2), ["c", "d"]);
    assert_eq!(p2["has_more"], true);
    assert_eq!(p2["first_id"], ids[2]);
    assert_eq!(p2["last_id"], ids[3]);
    let (s, p3) = gw
        .get_json(&format!("{base}?order=asc&limit=2&after={}", ids[3]))
        .await;
    assert_eq!(s, 200, "{p3}");
    assert_eq!(page_texts(&p3), ["e"]);
    assert_eq!(p3["has_more"], false);
    assert_eq!(p3["first_id"], ids[4]);
    assert_eq!(p3["last_id"], ids[4]);

    // Descending pages.
    let (s, d1) = gw.get_json(&format!("{base}?order=desc&limit=2")).await;
    assert_eq!(s, 200, "{d1}");
    assert_eq!(page_texts(&d1), ["e", "d"]);
    assert_eq!(d1["has_more"], true);
    let (s, d2) = gw
        .get_json(&format!("{base}?order=desc&limit=3&after={}", ids[3]))
        .await;
    assert_eq!(s, 200, "{d2}");
    assert_eq!(page_texts(&d2), ["c", "b", "a"]);
    assert_eq!(d2["has_more"], false);

    // Exactly the remaining count: has_more false.
    let (s, exact) = gw.get_json(&format!("{base}?order=asc&limit=5")).await;
    assert_eq!(s, 200);
    assert_eq!(exact["has_more"], false);
    assert_eq!(page_texts(&exact).len(), 5);
}

#[tokio::test]
async fn input_items_are_only_the_requests_own_input() {
    let gw = Gateway::start().await;
    let (r1, _) = five_inputs(&gw).await;
    gw.upstream.push(Reply::text("sure"));
    let (s, r2) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "previous_response_id": id_of(&r1),
                    "input": [{"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "f"}]},
                              {"role": "user", "content": "g"}]}),
        )
        .await;
    assert_eq!(s, 200, "{r2}");
    let (s, p) = gw
        .get_json(&format!(
            "/v1/responses/{}/input_items?order=asc",
            id_of(&r2)
        ))
        .await;
    assert_eq!(s, 200, "{p}");
    // Neither r1's input nor r1's output.
    assert_eq!(page_texts(&p), ["f", "g"]);
    assert_eq!(p["has_more"], false);
}

#[tokio::test]
async fn input_items_bad_queries() {
    let gw = Gateway::start().await;
    let (r, _) = five_inputs(&gw).await;
    let base = format!("/v1/responses/{}/input_items", id_of(&r));
    let (s, b) = gw
        .get_json("/v1/responses/resp_doesnotexist/input_items")
        .await;
    assert_api_error(s, &b, 404);
    let (s, b) = gw.get_json(&format!("{base}?after=msg_nope")).await;
    let e = assert_api_error(s, &b, 400);
    assert_eq!(e["param"], "after");
    let (s, b) = gw.get_json(&format!("{base}?limit=0")).await;
    let e = assert_api_error(s, &b, 400);
    assert_eq!(e["param"], "limit");
    let (s, b) = gw.get_json(&format!("{base}?limit=101")).await;
    assert_api_error(s, &b, 400);
    let (s, b) = gw.get_json(&format!("{base}?order=sideways")).await;
    let e = assert_api_error(s, &b, 400);
    assert_eq!(e["param"], "order");
}

// ------------------------------------------------------------------ delete

#[tokio::test]
async fn delete_then_get_404_and_delete_again_404() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("one"));
    let (s, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "x"}))
        .await;
    assert_eq!(s, 200);
    let id = id_of(&r);
    let (s, d) = gw.delete(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(
        d,
        json!({"id": id, "object": "response.deleted", "deleted": true})
    );
    let (s, b) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_api_error(s, &b, 404);
    let (s, b) = gw
        .get_json(&format!("/v1/responses/{id}/input_items"))
        .await;
    assert_api_error(s, &b, 404);
    let (s, b) = gw.delete(&format!("/v1/responses/{id}")).await;
    assert_api_error(s, &b, 404);
    // A deleted response cannot be continued from.
    let (s, b) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "y", "previous_response_id": id}),
        )
        .await;
    assert_api_error(s, &b, 400);
    assert_eq!(stored_response_count(&gw).unwrap_or(0), 0);
}

#[tokio::test]
async fn deleting_the_middle_of_a_chain_keeps_successors_working() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("A1"));
    gw.upstream.push(Reply::text("A2"));
    gw.upstream.push(Reply::text("A3"));
    let (_, r1) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "Q1"}))
        .await;
    let (_, r2) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "Q2", "previous_response_id": id_of(&r1)}),
        )
        .await;
    let (s, _) = gw.delete(&format!("/v1/responses/{}", id_of(&r1))).await;
    assert_eq!(s, 200);
    let (s, got2) = gw.get_json(&format!("/v1/responses/{}", id_of(&r2))).await;
    assert_eq!(s, 200);
    assert_eq!(got2, r2);
    let (s, r3) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "Q3", "previous_response_id": id_of(&r2)}),
        )
        .await;
    assert_eq!(s, 200, "{r3}");
    assert_eq!(
        sent_messages(&gw.upstream.last_request().unwrap()),
        msgs(&[
            ("user", "Q1"),
            ("assistant", "A1"),
            ("user", "Q2"),
            ("assistant", "A2"),
            ("user", "Q3")
        ])
    );
}

#[tokio::test]
async fn unknown_ids_are_404_in_openai_error_shape() {
    let gw = Gateway::start().await;
    for (status, body) in [
        gw.get_json("/v1/responses/resp_unknown123").await,
        gw.delete("/v1/responses/resp_unknown123").await,
        gw.get_json("/v1/responses/resp_unknown123/input_items")
            .await,
        gw.post_json("/v1/responses/resp_unknown123/cancel", &json!({}))
            .await,
    ] {
        let e = assert_api_error(status, &body, 404);
        assert_eq!(e["type"], "invalid_request_error");
        assert!(
            e["message"].as_str().unwrap().contains("resp_unknown123"),
            "{body}"
        );
    }
    assert_eq!(stored_statuses(&gw).map(|v| v.len()).unwrap_or(0), 0);
}

#[tokio::test]
async fn two_continuations_of_one_response_fork_independently() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("root answer"));
    let (_, r1) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "root"}))
        .await;
    gw.upstream.push(Reply::text("left answer"));
    let (s, left) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "left", "previous_response_id": id_of(&r1)}),
        )
        .await;
    assert_eq!(s, 200, "{left}");
    gw.upstream.push(Reply::text("right answer"));
    let (s, right) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "right", "previous_response_id": id_of(&r1)}),
        )
        .await;
    assert_eq!(s, 200, "{right}");
    assert_eq!(
        sent_messages(&gw.upstream.last_request().unwrap()),
        msgs(&[
            ("user", "root"),
            ("assistant", "root answer"),
            ("user", "right")
        ])
    );
    gw.upstream.push(Reply::text("left again"));
    let (s, _) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "left 2", "previous_response_id": id_of(&left)}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        sent_messages(&gw.upstream.last_request().unwrap()),
        msgs(&[
            ("user", "root"),
            ("assistant", "root answer"),
            ("user", "left"),
            ("assistant", "left answer"),
            ("user", "left 2")
        ])
    );
}

#[tokio::test]
async fn shutdown_with_a_stream_in_flight_stores_it_cancelled() {
    // No grace period: shutdown cancels the running stream at once.
    let mut opts = GatewayOptions::default();
    opts.server.shutdown_grace = std::time::Duration::ZERO;
    let gw = Gateway::start_with(opts).await;
    gw.upstream.push(
        Reply::text("word ".repeat(100))
            .chunk_chars(5)
            .delay_between_chunks(std::time::Duration::from_millis(40)),
    );
    let wait = std::time::Duration::from_secs(5);
    let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
    assert!(live.read_until("response.output_text.delta", wait).await);
    let id = live.response_id();
    let reader = tokio::spawn(async move { live.finish(wait).await });
    let gw = gw.restart().await;
    let cap = reader.await.unwrap();
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.cancelled");
    let (s, got) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["status"], "cancelled");
    assert_eq!(&got, cap.final_response());
}

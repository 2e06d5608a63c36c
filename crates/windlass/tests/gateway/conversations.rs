//! The Conversations API through the real HTTP server, and responses that
//! join a conversation with `conversation` on create.

use serde_json::{json, Value};
use windlass_testkit::{Gateway, Reply};

fn texts(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|i| {
            let c = &i["content"][0];
            c["text"].as_str().unwrap_or("").to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_conversation_is_created_updated_listed_and_deleted() {
    let gw = Gateway::start().await;
    let (status, conv) = gw
        .post_json(
            "/v1/conversations",
            &json!({"metadata": {"topic": "demo"},
                    "items": [{"type": "message", "role": "user", "content": "Hello!"}]}),
        )
        .await;
    assert_eq!(status, 200, "{conv}");
    assert_eq!(conv["object"], "conversation");
    assert_eq!(conv["metadata"]["topic"], "demo");
    let id = conv["id"].as_str().expect("id");
    assert!(id.starts_with("conv_"));

    let (status, updated) = gw
        .post_json(
            &format!("/v1/conversations/{id}"),
            &json!({"metadata": {"topic": "changed"}}),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    let (_, got) = gw.get_json(&format!("/v1/conversations/{id}")).await;
    assert_eq!(got["metadata"]["topic"], "changed");

    let (status, added) = gw
        .post_json(
            &format!("/v1/conversations/{id}/items"),
            &json!({"items": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "two"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "three"}]}
            ]}),
        )
        .await;
    assert_eq!(status, 200, "{added}");
    assert_eq!(added["data"].as_array().expect("data").len(), 2);
    let (_, asc) = gw
        .get_json(&format!("/v1/conversations/{id}/items?order=asc"))
        .await;
    assert_eq!(texts(&asc), ["Hello!", "two", "three"]);
    let (_, desc) = gw
        .get_json(&format!("/v1/conversations/{id}/items?limit=2"))
        .await;
    assert_eq!(texts(&desc), ["three", "two"]);
    assert_eq!(desc["has_more"], true);

    let second = asc["data"][1]["id"].as_str().expect("item id").to_owned();
    let (status, item) = gw
        .get_json(&format!("/v1/conversations/{id}/items/{second}"))
        .await;
    assert_eq!(status, 200, "{item}");
    assert_eq!(item["id"], second.as_str());
    let (status, after_delete) = gw
        .delete(&format!("/v1/conversations/{id}/items/{second}"))
        .await;
    assert_eq!(status, 200, "{after_delete}");
    assert_eq!(after_delete["object"], "conversation");
    let (_, asc) = gw
        .get_json(&format!("/v1/conversations/{id}/items?order=asc"))
        .await;
    assert_eq!(texts(&asc), ["Hello!", "three"]);

    let (status, deleted) = gw.delete(&format!("/v1/conversations/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(deleted["object"], "conversation.deleted");
    let (status, _) = gw.get_json(&format!("/v1/conversations/{id}")).await;
    assert_eq!(status, 404);
    let (status, _) = gw.get_json(&format!("/v1/conversations/{id}/items")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn responses_in_a_conversation_see_its_items_and_append_theirs() {
    let gw = Gateway::start().await;
    let (_, conv) = gw.post_json("/v1/conversations", &json!({})).await;
    let id = conv["id"].as_str().expect("id");
    for (n, answer) in ["first answer", "second answer", "third answer"]
        .iter()
        .enumerate()
    {
        gw.upstream.push(Reply::text(*answer));
        let (status, r) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "input": format!("question {n}"), "conversation": id}),
            )
            .await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["status"], "completed");
        // The response names its conversation, and GET returns it as well.
        assert_eq!(r["conversation"], json!({"id": id}), "{r}");
        let (_, got) = gw
            .get_json(&format!("/v1/responses/{}", r["id"].as_str().expect("id")))
            .await;
        assert_eq!(got, r);
    }
    // The third request carried the first two exchanges as history.
    let last = gw.upstream.last_request().expect("request");
    let sent = last["messages"].to_string();
    assert!(
        sent.contains("first answer") && sent.contains("question 1"),
        "{sent}"
    );
    let (_, items) = gw
        .get_json(&format!("/v1/conversations/{id}/items?order=asc"))
        .await;
    assert_eq!(
        texts(&items),
        [
            "question 0",
            "first answer",
            "question 1",
            "second answer",
            "question 2",
            "third answer"
        ]
    );
}

#[tokio::test]
async fn conversation_refusals_are_4xx_and_change_nothing() {
    let gw = Gateway::start().await;
    let (_, conv) = gw.post_json("/v1/conversations", &json!({})).await;
    let id = conv["id"].as_str().expect("id");
    let (status, err) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "conversation": id,
                    "previous_response_id": "resp_x"}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "conversation");
    let (status, err) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "conversation": {"id": "conv_missing"}}),
        )
        .await;
    assert_eq!(status, 404, "{err}");
    assert_eq!(gw.upstream.request_count(), 0);
    let (_, items) = gw.get_json(&format!("/v1/conversations/{id}/items")).await;
    assert_eq!(items["data"].as_array().expect("data").len(), 0);
    let (status, _) = gw
        .post_json(
            &format!("/v1/conversations/{id}"),
            &json!({"metadata": {"k": 1}}),
        )
        .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn streamed_responses_name_their_conversation_in_every_snapshot() {
    let gw = Gateway::start().await;
    let (_, conv) = gw.post_json("/v1/conversations", &json!({})).await;
    let id = conv["id"].as_str().expect("id");
    gw.upstream.push(Reply::text("streamed answer"));
    let cap = gw
        .stream(&json!({"model": "m", "input": "hi", "conversation": {"id": id}}))
        .await;
    cap.assert_well_formed();
    for t in [
        "response.created",
        "response.in_progress",
        "response.completed",
    ] {
        let events = cap.of_type(t);
        assert_eq!(events.len(), 1, "{t}");
        assert_eq!(
            events[0]["response"]["conversation"],
            json!({"id": id}),
            "{t}"
        );
    }
    // A response outside any conversation has no `conversation` field.
    gw.upstream.push(Reply::text("alone"));
    let (status, r) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "x"}))
        .await;
    assert_eq!(status, 200, "{r}");
    assert!(r.get("conversation").is_none(), "{r}");
}

//! The prompts API and `prompt` on create: a stored template with
//! variables produces the same upstream request as the expanded input,
//! versions are kept, the prompt is echoed, and tenants are kept apart.

use serde_json::{json, Value};
use windlass_testkit::{Gateway, Reply};

async fn create_prompt(gw: &Gateway, body: Value) -> Value {
    let (status, p) = gw.post_json("/v1/prompts", &body).await;
    assert_eq!(status, 200, "{p}");
    p
}

#[tokio::test]
async fn a_template_with_variables_sends_what_the_expanded_input_sends() {
    let gw = Gateway::start().await;
    let p = create_prompt(
        &gw,
        json!({"name": "support",
               "instructions": "You answer for {{company}}. Be {{tone}}.",
               "input": [{"type": "message", "role": "user",
                          "content": "My order {{order}} is late."}]}),
    )
    .await;
    assert_eq!(p["object"], "prompt");
    assert_eq!(p["latest_version"], "1");
    let id = p["id"].as_str().expect("id").to_owned();
    assert!(id.starts_with("pmpt_"), "{p}");

    gw.upstream.push(Reply::text("Sorry about that."));
    let (status, r) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "Where is it?",
                    "prompt": {"id": id, "variables": {"company": "Acme", "tone": "kind",
                                                        "order": "A-17"}}}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["prompt"]["id"], id.as_str(), "echoed: {r}");
    assert_eq!(r["prompt"]["variables"]["order"], "A-17");
    let templated = gw.upstream.last_request().expect("called");

    gw.upstream.push(Reply::text("Sorry about that."));
    let (status, _) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "instructions": "You answer for Acme. Be kind.",
                    "input": [{"type": "message", "role": "user", "content": "My order A-17 is late."},
                              {"type": "message", "role": "user", "content": "Where is it?"}]}),
        )
        .await;
    assert_eq!(status, 200);
    let expanded = gw.upstream.last_request().expect("called");
    assert_eq!(templated, expanded);
}

#[tokio::test]
async fn versions_are_kept_and_named_versions_are_used() {
    let gw = Gateway::start().await;
    let p = create_prompt(&gw, json!({"instructions": "Version one."})).await;
    let id = p["id"].as_str().expect("id");
    let (status, v2) = gw
        .post_json(
            &format!("/v1/prompts/{id}/versions"),
            &json!({"instructions": "Version two."}),
        )
        .await;
    assert_eq!(status, 200, "{v2}");
    assert_eq!(v2["version"], "2");
    let (_, got) = gw.get_json(&format!("/v1/prompts/{id}")).await;
    assert_eq!(got["latest_version"], "2");
    let (_, list) = gw.get_json(&format!("/v1/prompts/{id}/versions")).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2), "{list}");
    let (_, one) = gw.get_json(&format!("/v1/prompts/{id}/versions/1")).await;
    assert_eq!(one["instructions"], "Version one.");

    for (version, expected) in [(None, "Version two."), (Some("1"), "Version one.")] {
        gw.upstream.push(Reply::text("ok"));
        let mut prompt = json!({"id": id});
        if let Some(v) = version {
            prompt["version"] = json!(v);
        }
        let (status, r) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "input": "hi", "prompt": prompt}),
            )
            .await;
        assert_eq!(status, 200, "{r}");
        let sent = gw.upstream.last_request().expect("called");
        assert_eq!(sent["messages"][0]["content"], expected, "{sent}");
    }

    let (status, _) = gw.get_json("/v1/prompts").await;
    assert_eq!(status, 200);
    let (status, d) = gw.delete(&format!("/v1/prompts/{id}")).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["deleted"], true);
    let (status, _) = gw.get_json(&format!("/v1/prompts/{id}")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn bad_prompts_are_refused_by_name_and_call_nothing() {
    let gw = Gateway::start().await;
    let p = create_prompt(&gw, json!({"instructions": "Hello {{name}}."})).await;
    let id = p["id"].as_str().expect("id");
    for (prompt, status, param) in [
        (json!({"id": id}), 400, "prompt.variables.name"),
        (
            json!({"id": id, "variables": {"name": "a", "extra": "b"}}),
            400,
            "prompt.variables.extra",
        ),
        (
            json!({"id": id, "version": "9", "variables": {"name": "a"}}),
            404,
            "prompt.id",
        ),
        (json!({"id": "pmpt_unknown"}), 404, "prompt.id"),
    ] {
        let (got, err) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "input": "hi", "prompt": prompt}),
            )
            .await;
        assert_eq!(got, status, "{prompt}: {err}");
        assert_eq!(err["error"]["param"], param, "{err}");
    }
    let (status, err) = gw.post_json("/v1/prompts", &json!({"name": "empty"})).await;
    assert_eq!(status, 400, "{err}");
    assert!(gw.upstream.requests().is_empty());
}

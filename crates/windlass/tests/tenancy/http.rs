//! Tenant isolation over real HTTP: a key of another tenant gets exactly the
//! answer an unknown id gets, on every endpoint, for stored and running
//! responses, chains and item references; a key of the same tenant sees
//! everything. Scopes: a key without the route's scope gets 403.

use serde_json::{json, Value};
use windlass_testkit::tenants::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

const UNKNOWN: &str = "resp_0123456789abcdef0123456789abcdef";

async fn team() -> Gateway {
    let mut opts = GatewayOptions::default();
    let mut reader = key("reader", "acme");
    reader.scopes = Some(vec!["responses:read".into()]);
    opts.server.keys = resolve(&[
        key("alice", "acme"),
        key("amy", "acme"),
        key("bob", "globex"),
        reader,
    ]);
    Gateway::start_with(opts).await
}

fn hi(text: &str) -> Value {
    json!({"model": "m", "input": text})
}

/// Every read/delete/cancel route for a response id.
fn routes(id: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GET", format!("/v1/responses/{id}")),
        ("GET", format!("/v1/responses/{id}/input_items")),
        ("GET", format!("/v1/responses/{id}/trace")),
        ("POST", format!("/v1/responses/{id}/cancel")),
        ("DELETE", format!("/v1/responses/{id}")),
    ]
}

async fn call(who: &As<'_>, method: &str, path: &str) -> (u16, Value) {
    match method {
        "GET" => who.get(path).await,
        "POST" => who.post(path, &json!({})).await,
        _ => who.delete(path).await,
    }
}

/// What `who` gets for `id`, compared with what it gets for an unknown id.
async fn assert_unknown_to(who: &As<'_>, id: &str) {
    for ((method, path), (_, unknown_path)) in routes(id).into_iter().zip(routes(UNKNOWN)) {
        let (s, b) = call(who, method, &path).await;
        let (us, ub) = call(who, method, &unknown_path).await;
        assert_eq!(s, 404, "{method} {path}: {b}");
        assert_eq!(
            (s, without(&b, id)),
            (us, without(&ub, UNKNOWN)),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn another_tenants_stored_response_is_an_unknown_id() {
    let gw = team().await;
    gw.upstream.push(Reply::text("acme's secret plans"));
    let (alice, amy, bob) = (
        As::new(&gw, "alice"),
        As::new(&gw, "amy"),
        As::new(&gw, "bob"),
    );
    let r1 = alice.create(&hi("plans?")).await;
    let id = r1["id"].as_str().unwrap().to_owned();

    assert_unknown_to(&bob, &id).await;

    // The same tenant's other key sees all of it; bob's delete changed nothing.
    let (s, got) = amy.get(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["output"], r1["output"]);
    let (s, items) = amy.get(&format!("/v1/responses/{id}/input_items")).await;
    assert_eq!(s, 200, "{items}");
    assert_eq!(items["data"][0]["content"][0]["text"], "plans?");
    let (s, trace) = amy.get(&format!("/v1/responses/{id}/trace")).await;
    assert_eq!(s, 200, "{trace}");
    assert_eq!(gw.upstream.request_count(), 1);
    let (s, _) = amy.delete(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 200);
    let (s, _) = alice.get(&format!("/v1/responses/{id}")).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn chains_and_item_references_never_cross_tenants() {
    let gw = team().await;
    gw.upstream.push(Reply::text("acme's secret plans"));
    let (alice, amy, bob) = (
        As::new(&gw, "alice"),
        As::new(&gw, "amy"),
        As::new(&gw, "bob"),
    );
    let r1 = alice.create(&hi("plans?")).await;
    let id = r1["id"].as_str().unwrap().to_owned();
    let out_id = r1["output"][0]["id"].as_str().unwrap().to_owned();

    // previous_response_id: 400 naming it, as for an unknown id.
    let cont = |prev: &str| json!({"model": "m", "input": "more", "previous_response_id": prev});
    let (s, b) = bob.post("/v1/responses", &cont(&id)).await;
    let e = error_of(s, &b, 400);
    assert_eq!(e["param"], "previous_response_id");
    let (us, ub) = bob.post("/v1/responses", &cont(UNKNOWN)).await;
    assert_eq!((s, without(&b, &id)), (us, without(&ub, UNKNOWN)));

    // item_reference: 400 naming the input item, as for an unknown item.
    let refer =
        |item: &str| json!({"model": "m", "input": [{"type": "item_reference", "id": item}]});
    let (s, b) = bob.post("/v1/responses", &refer(&out_id)).await;
    let e = error_of(s, &b, 400);
    assert_eq!(e["param"], "input[0].id");
    let (us, ub) = bob.post("/v1/responses", &refer("msg_unknown")).await;
    assert_eq!((s, without(&b, &out_id)), (us, without(&ub, "msg_unknown")));
    assert_eq!(gw.upstream.request_count(), 1, "refused before the model");

    // The same tenant continues and references: the model sees the history.
    gw.upstream.push(Reply::text("continued"));
    amy.create(&cont(&id)).await;
    gw.upstream.push(Reply::text("referenced"));
    amy.create(&refer(&out_id)).await;
    let seen = gw.upstream.requests();
    assert_eq!(seen.len(), 3);
    for req in &seen[1..] {
        assert!(req.to_string().contains("acme's secret plans"), "{req}");
    }
}

#[tokio::test]
async fn another_tenants_running_response_is_an_unknown_id() {
    let gw = team().await;
    gw.upstream.push(Reply::text("never").stall());
    let (alice, amy, bob) = (
        As::new(&gw, "alice"),
        As::new(&gw, "amy"),
        As::new(&gw, "bob"),
    );
    let mut live = alice.stream(&hi("slow")).await;
    let raw = read_until(&mut live, "response.created").await;
    let id = created_id(&raw);

    assert_unknown_to(&bob, &id).await;
    // Not 409 "still in progress": bob cannot know it runs.
    let body = json!({"model": "m", "input": "next", "previous_response_id": id});
    let (s, b) = bob.post("/v1/responses", &body).await;
    assert_eq!(error_of(s, &b, 400)["param"], "previous_response_id");
    let (s, b) = amy.post("/v1/responses", &body).await;
    assert_eq!(error_of(s, &b, 409)["param"], "previous_response_id");

    let (s, got) = amy.get(&format!("/v1/responses/{id}")).await;
    assert_eq!((s, got["status"].as_str()), (200, Some("in_progress")));
    let (s, got) = amy
        .post(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (s, got["status"].as_str()),
        (200, Some("cancelled")),
        "{got}"
    );
    read_until(&mut live, "response.cancelled").await;
    let (s, got) = alice.get(&format!("/v1/responses/{id}")).await;
    assert_eq!((s, got["status"].as_str()), (200, Some("cancelled")));
}

#[tokio::test]
async fn a_key_without_the_scope_gets_403() {
    let gw = team().await;
    gw.upstream.push(Reply::text("hello"));
    let r1 = As::new(&gw, "alice").create(&hi("hi")).await;
    let id = r1["id"].as_str().unwrap();
    let reader = As::new(&gw, "reader");

    let (s, b) = reader.post("/v1/responses", &hi("write?")).await;
    let e = error_of(s, &b, 403);
    assert_eq!(e["code"], "insufficient_permissions");
    assert!(
        e["message"].as_str().unwrap().contains("responses:write"),
        "{e}"
    );
    for (method, path) in [
        ("DELETE", format!("/v1/responses/{id}")),
        ("POST", format!("/v1/responses/{id}/cancel")),
        ("GET", format!("/v1/responses/{id}/trace")),
        ("GET", "/v1/models".to_owned()),
    ] {
        let (s, b) = call(&reader, method, &path).await;
        error_of(s, &b, 403);
    }
    assert_eq!(gw.upstream.request_count(), 1);
    // What it may do, it does: read its tenant's response.
    let (s, got) = reader.get(&format!("/v1/responses/{id}")).await;
    assert_eq!((s, &got["id"]), (200, &r1["id"]));
    let (s, _) = reader.get(&format!("/v1/responses/{id}/input_items")).await;
    assert_eq!(s, 200);
}

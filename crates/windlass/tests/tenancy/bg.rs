//! Background responses, their stored streams and conversations belong to
//! the request's tenant: another tenant's key gets what an unknown id gets.

use std::time::Duration;

use serde_json::json;
use windlass_testkit::tenants::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

async fn team() -> Gateway {
    let mut opts = GatewayOptions::default();
    opts.server.keys = resolve(&[key("alice", "acme"), key("bob", "globex")]);
    Gateway::start_with(opts).await
}

#[tokio::test]
async fn another_tenant_cannot_see_or_touch_a_background_response_or_conversation() {
    let gw = team().await;
    let alice = As::new(&gw, "alice");
    let bob = As::new(&gw, "bob");
    gw.upstream.push(Reply::text("acme only"));
    let queued = alice
        .create(&json!({"model": "m", "input": "x", "background": true}))
        .await;
    let id = queued["id"].as_str().expect("id").to_owned();
    let mut done = json!(null);
    for _ in 0..400 {
        let (s, r) = alice.get(&format!("/v1/responses/{id}")).await;
        assert_eq!(s, 200, "{r}");
        if r["status"] == "completed" {
            done = r;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(done["status"], "completed");
    for path in [
        format!("/v1/responses/{id}"),
        format!("/v1/responses/{id}?stream=true"),
    ] {
        let (s, _) = bob.get(&path).await;
        assert_eq!(s, 404, "{path}");
    }
    let (s, _) = alice.get(&format!("/v1/responses/{id}?stream=true")).await;
    assert_eq!(s, 200);

    let (s, conv) = alice.post("/v1/conversations", &json!({})).await;
    assert_eq!(s, 200, "{conv}");
    let cid = conv["id"].as_str().expect("id");
    for path in [
        format!("/v1/conversations/{cid}"),
        format!("/v1/conversations/{cid}/items"),
    ] {
        let (s, _) = bob.get(&path).await;
        assert_eq!(s, 404, "{path}");
    }
    let (s, _) = bob
        .post(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "conversation": cid}),
        )
        .await;
    assert_eq!(s, 404);
    let (s, _) = bob.delete(&format!("/v1/conversations/{cid}")).await;
    assert_eq!(s, 404);
    let (s, _) = alice.get(&format!("/v1/conversations/{cid}")).await;
    assert_eq!(s, 200, "still there for its tenant");
}

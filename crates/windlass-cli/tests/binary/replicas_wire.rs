//! Two real `windlass serve` processes on one Postgres database: a
//! conversation created on one is continued and listed on the other, and a
//! `store: false` run cancelled (or deleted) from the replica that does not
//! run it gets a defined answer at once. Skipped when `WINDLASS_TEST_PG` is
//! unset; `scripts/test.sh` sets it.

use std::time::Duration;

use crate::replica_support::{pg_schema_url, Replica};
use serde_json::{json, Value};
use windlass_testkit::{FakeUpstream, Reply};

fn texts(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_is_shared_by_replicas() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let upstream = FakeUpstream::start().await;
    let a = Replica::start(&db, &upstream.base_url(), &[]).await;
    let b = Replica::start(&db, &upstream.base_url(), &[]).await;

    let (status, conv) = a
        .post(
            "/v1/conversations",
            &json!({"items": [{"type": "message", "role": "user", "content": "Remember 42."}]}),
        )
        .await;
    assert_eq!(status, 200, "{conv}");
    let id = conv["id"].as_str().expect("id").to_owned();

    for (replica, answer) in [(&b, "Noted."), (&a, "It was 42.")] {
        upstream.push(Reply::text(answer));
        let (status, r) = replica
            .post(
                "/v1/responses",
                &json!({"model": "m", "input": "And?", "conversation": id}),
            )
            .await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["conversation"]["id"], id.as_str(), "{r}");
    }
    // The second request (on A) saw what B appended.
    let sent = upstream.last_request().expect("request")["messages"].to_string();
    assert!(
        sent.contains("Remember 42.") && sent.contains("Noted."),
        "{sent}"
    );
    let (status, items) = b
        .get(&format!("/v1/conversations/{id}/items?order=asc"))
        .await;
    assert_eq!(status, 200, "{items}");
    assert_eq!(
        texts(&items),
        ["Remember 42.", "And?", "Noted.", "And?", "It was 42."]
    );
    let (status, _) = b
        .post(
            &format!("/v1/conversations/{id}"),
            &json!({"metadata": {"k": "v"}}),
        )
        .await;
    assert_eq!(status, 200);
    let (_, got) = a.get(&format!("/v1/conversations/{id}")).await;
    assert_eq!(got["metadata"]["k"], "v");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_unstored_run_on_another_replica_answers_at_once() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let upstream = FakeUpstream::start().await;
    let a = Replica::start(&db, &upstream.base_url(), &[]).await;
    let b = Replica::start(&db, &upstream.base_url(), &[]).await;

    for action in ["cancel", "delete"] {
        upstream.push(Reply::text("thinking about it for a long time").stall_after(2));
        let (stream, id) = a
            .stream_until_created(
                &json!({"model": "m", "input": "Take your time.", "store": false}),
            )
            .await;
        // B reaches A over the bus; A stops the run but never stores it, so
        // B answers as for any response that is not kept (before: a 500
        // after B's 30 s wait for a save that never comes).
        let (status, answer) = match action {
            "cancel" => {
                b.post(&format!("/v1/responses/{id}/cancel"), &json!({}))
                    .await
            }
            _ => b.delete(&format!("/v1/responses/{id}")).await,
        };
        match action {
            "cancel" => {
                assert_eq!(status, 404, "{answer}");
                assert_eq!(answer["error"]["code"], "not_found", "{answer}");
                let message = answer["error"]["message"].as_str().expect("message");
                assert!(message.contains("store: false"), "{message}");
                assert!(message.contains("cancelled"), "{message}");
            }
            _ => {
                // As a delete of a store:false run on its own replica.
                assert_eq!(status, 200, "{answer}");
                assert_eq!(answer["deleted"], true, "{answer}");
            }
        }
        // The run really stopped: A's stream ends cancelled.
        let rest = tokio::time::timeout(Duration::from_secs(20), stream.text())
            .await
            .expect("stream ends")
            .expect("body");
        assert!(rest.contains("response.cancelled"), "{action}: {rest}");
        // Nothing was stored by either replica.
        let (status, _) = b.get(&format!("/v1/responses/{id}")).await;
        assert_eq!(status, 404);
    }
}

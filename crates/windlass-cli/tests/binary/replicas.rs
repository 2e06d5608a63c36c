//! Two real `windlass serve` processes on one Postgres database: what one
//! creates the other serves and continues, and a cancel sent to one stops
//! a run that is live on the other (LISTEN/NOTIFY cancel bus), and a run
//! whose replica is killed ends failed once its lease expires; quotas are
//! shared. Skipped when
//! `WINDLASS_TEST_PG` is unset; `scripts/test.sh` sets it.

use std::time::Duration;

use crate::replica_support::{pg_schema_url, Replica};
use serde_json::json;
use windlass_testkit::{FakeUpstream, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_created_on_one_replica_is_served_and_continued_by_another() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let upstream = FakeUpstream::start().await;
    // Both start at once on an empty database (both migrate).
    let up = upstream.base_url();
    let (a, b) = tokio::join!(Replica::start(&db, &up, &[]), Replica::start(&db, &up, &[]),);

    upstream.push(Reply::text("The capital is Paris."));
    let (status, created) = a
        .post(
            "/v1/responses",
            &json!({"model": "m", "input": "Capital of France?"}),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();

    let (status, fetched) = b.get(&format!("/v1/responses/{id}")).await;
    assert_eq!(status, 200, "{fetched}");
    assert_eq!(fetched, created);
    let (status, items) = b.get(&format!("/v1/responses/{id}/input_items")).await;
    assert_eq!(status, 200);
    assert_eq!(items["data"][0]["content"][0]["text"], "Capital of France?");

    // Continued on B: the upstream sees A's turn as history.
    upstream.push(Reply::text("About 2 million."));
    let (status, next) = b
        .post(
            "/v1/responses",
            &json!({"model": "m", "input": "Its population?", "previous_response_id": id}),
        )
        .await;
    assert_eq!(status, 200, "{next}");
    assert_eq!(next["output"][0]["content"][0]["text"], "About 2 million.");
    let sent = upstream.last_request().expect("upstream request");
    let history: Vec<String> = sent["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    let joined = history.join("|");
    assert!(joined.contains("Capital of France?"), "{joined}");
    assert!(joined.contains("The capital is Paris."), "{joined}");
    assert!(joined.contains("Its population?"), "{joined}");

    // And A serves B's continuation.
    let next_id = next["id"].as_str().expect("id");
    let (status, again) = a.get(&format!("/v1/responses/{next_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(again, next);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_sent_to_one_replica_stops_a_run_live_on_another() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let upstream = FakeUpstream::start().await;
    let a = Replica::start(&db, &upstream.base_url(), &[]).await;
    let b = Replica::start(&db, &upstream.base_url(), &[]).await;

    // The model streams a little, then hangs: the run stays live on A.
    upstream.push(Reply::text("thinking about it for a long time").stall_after(2));
    let (stream, id) = a
        .stream_until_created(&json!({"model": "m", "input": "Take your time."}))
        .await;
    // B has never seen this response; it reaches A over the bus.
    let (status, cancelled) = b
        .post(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["id"], id.as_str());
    assert_eq!(cancelled["status"], "cancelled");

    // A's stream ends with the cancellation, and both replicas serve the
    // stored, cancelled response.
    let rest = tokio::time::timeout(Duration::from_secs(20), stream.text())
        .await
        .expect("stream ends")
        .expect("body");
    assert!(rest.contains("response.cancelled"), "{rest}");
    for replica in [&a, &b] {
        let (status, r) = replica.get(&format!("/v1/responses/{id}")).await;
        assert_eq!(status, 200);
        assert_eq!(r["status"], "cancelled");
    }

    // Cancelling it again: no longer running anywhere.
    let (status, again) = b
        .post(&format!("/v1/responses/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 400, "{again}");
    assert_eq!(again["error"]["code"], "response_not_cancellable");
    // An id no replica runs or stores is unknown.
    let (status, _) = b.post("/v1/responses/resp_nobody/cancel", &json!({})).await;
    assert_eq!(status, 404);
}

/// A config file giving background runs a short lease, so a dead
/// replica's runs are recovered quickly.
fn short_lease_config(dir: &std::path::Path) -> String {
    let path = dir.join("windlass.toml");
    std::fs::write(&path, "[server.background]\nlease_ms = 1000\n").expect("write config");
    path.to_str().expect("utf-8 path").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replicas_run_ends_failed_on_another_never_in_progress_forever() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("windlass-replicas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = short_lease_config(&dir);
    let upstream = FakeUpstream::start().await;
    let extra = ["--config", config.as_str()];
    let mut a = Replica::start(&db, &upstream.base_url(), &extra).await;
    let b = Replica::start(&db, &upstream.base_url(), &extra).await;

    // A background run on A whose model never finishes.
    upstream.push(Reply::text("never finishing").stall());
    let (status, queued) = a
        .post(
            "/v1/responses",
            &json!({"model": "m", "input": "Long job.", "background": true}),
        )
        .await;
    assert_eq!(status, 200, "{queued}");
    let id = queued["id"].as_str().expect("id").to_owned();
    // B sees it running (A's live row), once A has reached the model.
    let seen = wait_until(Duration::from_secs(20), || async {
        let (_, r) = b.get(&format!("/v1/responses/{id}")).await;
        (upstream.request_count() >= 1 && r["status"] == "in_progress").then_some(r)
    })
    .await;
    if seen.is_none() {
        let (status, r) = b.get(&format!("/v1/responses/{id}")).await;
        panic!(
            "B never saw the run in progress: {status} {r}; upstream requests: {}",
            upstream.request_count()
        );
    }

    // A dies without a word: no final save, no lease renewals.
    a.kill();

    // B recovers it once the lease has run out: it ends failed (or
    // cancelled), stored, never in_progress forever.
    let ended = wait_until(Duration::from_secs(30), || async {
        let (status, r) = b.get(&format!("/v1/responses/{id}")).await;
        (status == 200 && r["status"] != "in_progress" && r["status"] != "queued").then_some(r)
    })
    .await
    .expect("the run was recovered");
    assert!(
        ended["status"] == "failed" || ended["status"] == "cancelled",
        "{ended}"
    );
    if ended["status"] == "failed" {
        assert!(ended["error"]["message"].is_string(), "{ended}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Polls `probe` every 100 ms until it yields a value or `limit` passes.
async fn wait_until<T, F, Fut>(limit: Duration, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(v) = probe().await {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The default tenant may make two requests a minute: two replicas on one
/// database share that budget (Postgres quota buckets), so the third
/// request is refused whichever replica it reaches, with `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_one_quota() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("windlass-quota-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("windlass.toml");
    std::fs::write(
        &config,
        "[server.tenants.default]\nrequests_per_minute = 2\n",
    )
    .expect("write config");
    let config = config.to_str().expect("utf-8 path").to_owned();
    let upstream = FakeUpstream::start().await;
    let extra = ["--config", config.as_str()];
    let a = Replica::start(&db, &upstream.base_url(), &extra).await;
    let b = Replica::start(&db, &upstream.base_url(), &extra).await;

    upstream.set_default(Reply::text("hello"));
    let body = json!({"model": "m", "input": "hi"});
    let (status, first) = a.post("/v1/responses", &body).await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = b.post("/v1/responses", &body).await;
    assert_eq!(status, 200, "{second}");
    for replica in [&a, &b] {
        let resp = replica
            .client
            .post(replica.url("/v1/responses"))
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(resp.status().as_u16(), 429);
        let retry: u64 = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .expect("Retry-After seconds");
        assert!(retry >= 1);
    }
    assert_eq!(
        upstream.request_count(),
        2,
        "refused requests cost nothing upstream"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The `RunStore` (live-run) contract, checked against the in-memory store,
//! SQLite on a WAL file and Postgres (feature `postgres`, when
//! `WINDLASS_TEST_PG` is set): live rows, leases, claims, the final save
//! replacing the live row, and stored stream events.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::{assistant, resource, user, TempDb};
use windlass_engine::{LiveRun, NewResponse, ResponseStore, RunStore, StoreError, StoredEvent};
use windlass_protocol::{ResponseResource, ResponseStatus};
use windlass_store::{MemoryStore, SqliteStore};

trait Both: ResponseStore + RunStore {}
impl<T: ResponseStore + RunStore> Both for T {}

async fn stores() -> Vec<(Arc<dyn Both>, Option<TempDb>)> {
    let db = TempDb::new();
    let sqlite = SqliteStore::open(&db.path).await.expect("open");
    #[allow(unused_mut)]
    let mut stores = vec![
        (Arc::new(MemoryStore::new()) as Arc<dyn Both>, None),
        (Arc::new(sqlite) as Arc<dyn Both>, Some(db)),
    ];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let pg = windlass_store::PgStore::open(&url)
            .await
            .expect("open postgres");
        stores.push((Arc::new(pg), None));
    }
    stores
}

fn live(id: &str, status: ResponseStatus, created_at: u64) -> ResponseResource {
    let mut r = resource(id, None, Vec::new());
    r.status = status;
    r.completed_at = None;
    r.created_at = created_at;
    r.background = true;
    r
}

fn run<'a>(r: &'a ResponseResource, replica: &'a str, lease: u64) -> LiveRun<'a> {
    LiveRun {
        tenant: "default",
        response: r,
        replica,
        lease_until: lease,
        resume: Some("{\"input\":\"hi\"}"),
    }
}

fn event(n: u64) -> StoredEvent {
    StoredEvent {
        sequence_number: n,
        json: format!("{{\"type\":\"response.output_text.delta\",\"sequence_number\":{n}}}"),
    }
}

#[tokio::test]
async fn a_live_row_is_read_back_per_tenant_and_replaced_by_the_final_save() {
    for (store, _db) in stores().await {
        let queued = live("resp_live", ResponseStatus::Queued, 10);
        store
            .put_live(run(&queued, "r1", 1_000))
            .await
            .expect("put");
        let got = store.get_live("default", "resp_live").await.expect("get");
        let got = got.expect("live row");
        assert_eq!(got.response, queued);
        assert_eq!(got.replica, "r1");
        assert_eq!(got.lease_until, 1_000);
        assert_eq!(got.resume.as_deref(), Some("{\"input\":\"hi\"}"));
        assert_eq!(
            store.get_live("other", "resp_live").await.expect("get"),
            None
        );

        // A status change replaces the row.
        let running = live("resp_live", ResponseStatus::InProgress, 10);
        store
            .put_live(run(&running, "r1", 2_000))
            .await
            .expect("put");
        let got = store.get_live("default", "resp_live").await.expect("get");
        assert_eq!(
            got.expect("row").response.status,
            ResponseStatus::InProgress
        );

        // The final save removes the live row.
        let done = resource("resp_live", None, vec![assistant("msg_o", "done")]);
        let input = [user("msg_i", "hi")];
        let new = NewResponse {
            tenant: "default",
            response: &done,
            input: &input,
            trace: None,
        };
        store.save(new).await.expect("save");
        assert_eq!(
            store.get_live("default", "resp_live").await.expect("get"),
            None
        );
        // A stored response cannot go live again.
        let again = store.put_live(run(&queued, "r1", 3_000)).await;
        assert!(matches!(again, Err(StoreError::Duplicate(_))), "{again:?}");
    }
}

#[tokio::test]
async fn expired_leases_are_claimed_once_and_renewed_ones_are_not() {
    for (store, _db) in stores().await {
        let a = live("resp_a", ResponseStatus::Queued, 1);
        let b = live("resp_b", ResponseStatus::InProgress, 2);
        let c = live("resp_c", ResponseStatus::Queued, 3);
        store.put_live(run(&a, "dead", 100)).await.expect("put");
        store.put_live(run(&b, "dead", 100)).await.expect("put");
        store.put_live(run(&c, "alive", 100)).await.expect("put");
        assert_eq!(store.renew_leases("alive", 5_000).await.expect("renew"), 1);

        let claimed = store
            .claim_expired("me", 200, 9_000, 10)
            .await
            .expect("claim");
        let ids: Vec<&str> = claimed.iter().map(|r| r.response.id.as_str()).collect();
        assert_eq!(
            ids,
            ["resp_a", "resp_b"],
            "oldest first, the renewed one kept"
        );
        assert!(claimed
            .iter()
            .all(|r| r.replica == "me" && r.lease_until == 9_000));
        // A second claimer finds nothing: the claims hold new leases.
        let second = store
            .claim_expired("other", 300, 9_000, 10)
            .await
            .expect("claim");
        assert!(second.is_empty(), "{second:?}");
        // The limit bounds a claim.
        let later = store
            .claim_expired("x", 10_000, 20_000, 1)
            .await
            .expect("claim");
        assert_eq!(later.len(), 1);

        assert!(store.drop_live("default", "resp_c").await.expect("drop"));
        assert!(!store.drop_live("default", "resp_c").await.expect("drop"));
    }
}

#[tokio::test]
async fn events_are_read_after_a_number_and_deleted_with_the_response() {
    for (store, _db) in stores().await {
        let id = "resp_ev";
        store
            .append_events("default", id, &[event(0), event(1), event(2)])
            .await
            .expect("append");
        // A retried append of stored numbers is ignored.
        store
            .append_events("default", id, &[event(2), event(3)])
            .await
            .expect("append");
        let all = store.events_after("default", id, None).await.expect("read");
        let seqs: Vec<u64> = all.iter().map(|e| e.sequence_number).collect();
        assert_eq!(seqs, [0, 1, 2, 3]);
        assert_eq!(all[1], event(1));
        let after = store
            .events_after("default", id, Some(1))
            .await
            .expect("read");
        let seqs: Vec<u64> = after.iter().map(|e| e.sequence_number).collect();
        assert_eq!(seqs, [2, 3]);
        let foreign = store.events_after("other", id, None).await.expect("read");
        assert!(foreign.is_empty());

        let done = resource(id, None, Vec::new());
        let new = NewResponse {
            tenant: "default",
            response: &done,
            input: &[],
            trace: None,
        };
        store.save(new).await.expect("save");
        assert!(store.delete("default", id).await.expect("delete"));
        let gone = store.events_after("default", id, None).await.expect("read");
        assert!(gone.is_empty(), "events deleted with the response");
    }
}

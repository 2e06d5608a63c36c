//! Retention: pruning by age deletes old responses, their traces and the
//! items nothing else references; a newer response continuing from a pruned
//! one keeps its whole history.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{transcript, TempDb, Turn, T};
use rusqlite::Connection;
use windlass_engine::{NewResponse, ResponseStore, Trace};
use windlass_store::{MemoryStore, SqliteStore};

fn turn(id: &str, previous: Option<&str>, created_at: u64) -> Turn {
    let mut t = Turn::new(id, previous, 2, 2);
    t.resource.created_at = created_at;
    t
}

/// a <- b <- c (a chain; c is new) and d (old, alone, in another tenant).
async fn prune_by_age(store: &dyn ResponseStore) -> (Turn, Turn, Turn) {
    let a = turn("a", None, 1_000);
    let trace = Trace {
        response_id: "a".into(),
        ..Trace::default()
    };
    store
        .save(NewResponse {
            tenant: T,
            response: &a.resource,
            input: &a.input,
            trace: Some(&trace),
        })
        .await
        .expect("save");
    let b = turn("b", Some("a"), 2_000);
    b.save(store).await;
    let c = turn("c", Some("b"), 3_000);
    c.save(store).await;
    let d = turn("d", None, 1_500);
    d.save_as(store, "acme").await;

    assert_eq!(
        store.prune(1_000).await.expect("prune"),
        0,
        "strictly older"
    );
    assert_eq!(store.prune(2_500).await.expect("prune"), 3);
    for (tenant, id) in [(T, "a"), (T, "b"), ("acme", "d")] {
        assert_eq!(store.get(tenant, id).await.expect("get"), None, "{id}");
    }
    assert_eq!(store.trace(T, "a").await.expect("trace"), None);
    assert_eq!(
        store.load_context(T, "c").await.expect("load"),
        Some(transcript(&[&a, &b, &c])),
        "the survivor keeps its history"
    );
    // Items the survivor references stay; the lone old one's are gone.
    assert!(store.find_item(T, "a_in0").await.expect("find").is_some());
    assert_eq!(store.find_item("acme", "d_in0").await.expect("find"), None);
    assert_eq!(store.prune(2_500).await.expect("prune again"), 0);
    (a, b, c)
}

#[tokio::test]
async fn memory_prunes_by_age() {
    prune_by_age(&MemoryStore::new()).await;
}

fn count(db: &str, table: &str) -> i64 {
    Connection::open(db)
        .expect("raw")
        .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

#[tokio::test]
async fn sqlite_prunes_by_age_and_frees_rows() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let (a, b, c) = prune_by_age(&store).await;
    store.close().await;
    assert_eq!(count(&db.path, "responses"), 1);
    // Exactly the survivor's transcript is left.
    assert_eq!(
        count(&db.path, "items"),
        transcript(&[&a, &b, &c]).len() as i64
    );
}

/// More than one batch of old responses, chained: all go, in one call.
#[tokio::test]
async fn sqlite_prunes_past_one_batch() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let mut previous: Option<String> = None;
    for n in 0..600u64 {
        let id = format!("r{n}");
        let t = {
            let mut t = Turn::new(&id, previous.as_deref(), 1, 1);
            t.resource.created_at = 100 + n;
            t
        };
        t.save(&store).await;
        previous = Some(id);
    }
    assert_eq!(store.prune(100 + 599).await.expect("prune"), 599);
    let left = store
        .load_context(T, "r599")
        .await
        .expect("load")
        .expect("kept");
    assert_eq!(left.len(), 1200, "the whole chain's transcript survives");
    store.close().await;
    assert_eq!(count(&db.path, "responses"), 1);
}

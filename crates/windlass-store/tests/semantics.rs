//! The `ResponseStore` contract, checked against every implementation: the
//! in-memory store, SQLite in memory, SQLite on a WAL file and Postgres
//! (with the `postgres` feature; skipped when `WINDLASS_TEST_PG` is unset).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::time::Instant;

use common::{assistant, call, ids, resource, transcript, unknown, user, TempDb, Turn, T};
use windlass_engine::{
    NewResponse, PageRequest, ResponseStore, SortOrder, StoreError, Trace, TraceStep,
};
use windlass_store::{MemoryStore, SqliteStore};

/// A store under test plus whatever must outlive it (its database file).
struct Fixture {
    store: Box<dyn ResponseStore>,
    _db: Option<TempDb>,
}

async fn round_trip(store: &dyn ResponseStore) {
    let input = vec![user("msg_in", "hi"), unknown("ws_in")];
    let output = vec![
        call("fc_1", "call_1"),
        unknown("ws_1"),
        assistant("msg_out", "hello"),
    ];
    let saved = resource("resp_a", None, output);
    let new = NewResponse {
        tenant: T,
        response: &saved,
        input: &input,
        trace: None,
    };
    store.save(new).await.expect("save");

    assert_eq!(store.get(T, "resp_a").await.expect("get"), Some(saved));
    assert_eq!(store.get(T, "resp_nope").await.expect("get"), None);
    assert_eq!(
        store.load_context(T, "resp_nope").await.expect("load"),
        None
    );
}

async fn traces_live_and_die_with_their_response(store: &dyn ResponseStore) {
    let trace = Trace {
        response_id: "resp_t".to_owned(),
        steps: vec![TraceStep {
            index: 0,
            duration_ms: 1.5,
            input_tokens: 3,
            output_tokens: 4,
            total_tokens: 7,
            finish_reason: Some("stop".into()),
            tool_calls: 0,
            verification: false,
        }],
        actions: Vec::new(),
        checks: Vec::new(),
    };
    let saved = resource("resp_t", None, vec![assistant("msg_t", "hi")]);
    let input = vec![user("msg_t_in", "hi")];
    store
        .save(NewResponse {
            tenant: T,
            response: &saved,
            input: &input,
            trace: Some(&trace),
        })
        .await
        .expect("save");
    assert_eq!(store.trace(T, "resp_t").await.expect("trace"), Some(trace));
    // Saved without one: none.
    let a = Turn::new("a", None, 1, 1);
    a.save(store).await;
    assert_eq!(store.trace(T, a.id()).await.expect("trace"), None);
    assert!(store.delete(T, "resp_t").await.expect("delete"));
    assert_eq!(store.trace(T, "resp_t").await.expect("trace"), None);
}

async fn chain_of_three(store: &dyn ResponseStore) {
    let a = Turn::new("a", None, 2, 1);
    let b = Turn::new("b", Some("a"), 1, 2);
    let c = Turn::new("c", Some("b"), 1, 1);
    for t in [&a, &b, &c] {
        t.save(store).await;
    }

    let load = |id| store.load_context(T, id);
    assert_eq!(load("a").await.expect("load"), Some(transcript(&[&a])));
    assert_eq!(load("b").await.expect("load"), Some(transcript(&[&a, &b])));
    let context = load("c").await.expect("load").expect("known");
    assert_eq!(
        ids(&context),
        ["a_in0", "a_in1", "a_out0", "b_in0", "b_out0", "b_out1", "c_in0", "c_out0"]
    );
    assert_eq!(context, transcript(&[&a, &b, &c]));
}

async fn delete_keeps_successors(store: &dyn ResponseStore) {
    let a = Turn::new("a", None, 1, 1);
    let b = Turn::new("b", Some("a"), 1, 2);
    let c = Turn::new("c", Some("b"), 1, 1);
    for t in [&a, &b, &c] {
        t.save(store).await;
    }
    let full = transcript(&[&a, &b, &c]);

    assert!(store.delete(T, "b").await.expect("delete"));
    assert!(!store.delete(T, "b").await.expect("delete again"));
    assert_eq!(store.get(T, "b").await.expect("get"), None);
    assert_eq!(store.load_context(T, "b").await.expect("load"), None);
    let page = PageRequest {
        after: None,
        limit: 10,
        order: SortOrder::Asc,
    };
    assert_eq!(store.input_items(T, "b", &page).await.expect("page"), None);
    assert_eq!(
        store.load_context(T, "c").await.expect("load"),
        Some(full.clone())
    );

    // Continuing from a deleted response starts from an empty history.
    let d = Turn::new("d", Some("b"), 1, 1);
    d.save(store).await;
    assert_eq!(
        store.load_context(T, "d").await.expect("load"),
        Some(transcript(&[&d]))
    );

    // Items survive while anything references them, and only that long.
    assert!(store.delete(T, "a").await.expect("delete"));
    assert_eq!(store.load_context(T, "c").await.expect("load"), Some(full));
    assert!(store.find_item(T, "a_in0").await.expect("find").is_some());
    assert!(store.delete(T, "c").await.expect("delete"));
    for gone in ["a_in0", "a_out0", "b_in0", "b_out1", "c_out0"] {
        assert_eq!(
            store.find_item(T, gone).await.expect("find"),
            None,
            "{gone}"
        );
    }
    assert!(store.find_item(T, "d_in0").await.expect("find").is_some());
}

async fn duplicate_is_rejected_atomically(store: &dyn ResponseStore) {
    let first = Turn::new("a", None, 1, 1);
    first.save(store).await;

    let mut second = Turn::new("a", None, 1, 1);
    second.resource.model = "other-model".into();
    second.input = vec![user("dup_in", "never stored")];
    let new = NewResponse {
        tenant: T,
        response: &second.resource,
        input: &second.input,
        trace: None,
    };
    let err = store.save(new).await.expect_err("duplicate");
    assert!(
        matches!(&err, StoreError::Duplicate(id) if id == "a"),
        "{err:?}"
    );
    assert_eq!(store.get(T, "a").await.expect("get"), Some(first.resource));
    assert_eq!(store.find_item(T, "dup_in").await.expect("find"), None);
}

async fn input_items_pagination(store: &dyn ResponseStore) {
    Turn::new("h", None, 2, 1).save(store).await;
    Turn::new("p", Some("h"), 5, 2).save(store).await;

    let page = |order, after: Option<&str>, limit| PageRequest {
        after: after.map(str::to_owned),
        limit,
        order,
    };
    let list = |req: PageRequest| async move {
        let page = store
            .input_items(T, "p", &req)
            .await
            .expect("page")
            .expect("known");
        (ids(&page.items).join(","), page.has_more)
    };
    use SortOrder::{Asc, Desc};
    assert_eq!(
        list(page(Asc, None, 100)).await,
        ("p_in0,p_in1,p_in2,p_in3,p_in4".into(), false)
    );
    assert_eq!(list(page(Asc, None, 2)).await, ("p_in0,p_in1".into(), true));
    assert_eq!(
        list(page(Asc, Some("p_in1"), 2)).await,
        ("p_in2,p_in3".into(), true)
    );
    assert_eq!(
        list(page(Asc, Some("p_in3"), 2)).await,
        ("p_in4".into(), false)
    );
    assert_eq!(
        list(page(Asc, Some("p_in2"), 2)).await,
        ("p_in3,p_in4".into(), false)
    );
    assert_eq!(list(page(Asc, Some("p_in4"), 2)).await, ("".into(), false));
    assert_eq!(
        list(page(Desc, None, 2)).await,
        ("p_in4,p_in3".into(), true)
    );
    assert_eq!(
        list(page(Desc, Some("p_in3"), 2)).await,
        ("p_in2,p_in1".into(), true)
    );
    assert_eq!(
        list(page(Desc, Some("p_in1"), 2)).await,
        ("p_in0".into(), false)
    );
    assert_eq!(
        list(page(Desc, None, 5)).await,
        ("p_in4,p_in3,p_in2,p_in1,p_in0".into(), false)
    );

    // Cursors must name one of this response's own input items.
    for bad in ["nope", "p_out0", "h_in0"] {
        let err = store.input_items(T, "p", &page(Asc, Some(bad), 2)).await;
        assert!(
            matches!(&err, Err(StoreError::UnknownCursor(c)) if c == bad),
            "{err:?}"
        );
    }
    let unknown = store
        .input_items(T, "nope", &page(Asc, None, 2))
        .await
        .expect("page");
    assert_eq!(unknown, None);
}

async fn find_item_returns_newest(store: &dyn ResponseStore) {
    let mut a = Turn::new("a", None, 0, 1);
    a.input = vec![user("shared", "first")];
    a.save(store).await;
    let mut b = Turn::new("b", Some("a"), 0, 1);
    b.input = vec![user("shared", "second")];
    b.save(store).await;

    let find = |id| store.find_item(T, id);
    assert_eq!(
        find("shared").await.expect("find"),
        Some(user("shared", "second"))
    );
    assert_eq!(
        find("a_out0").await.expect("find"),
        Some(a.resource.output[0].clone())
    );
    assert_eq!(find("nope").await.expect("find"), None);
    assert!(store.delete(T, "b").await.expect("delete"));
    assert_eq!(
        find("shared").await.expect("find"),
        Some(user("shared", "first"))
    );
}

async fn unknown_previous_means_empty_history(store: &dyn ResponseStore) {
    let t = Turn::new("t", Some("resp_gone"), 1, 1);
    t.save(store).await;
    assert_eq!(
        store.load_context(T, "t").await.expect("load"),
        Some(transcript(&[&t]))
    );
    store.ping().await.expect("ping");
}

/// 100 turns of 3 items each; the last one's context is all 300 in order.
async fn deep_chain(store: &dyn ResponseStore, label: &str) {
    let mut turns = Vec::new();
    for n in 0..100 {
        let previous = (n > 0).then(|| format!("r{}", n - 1));
        let turn = Turn::new(&format!("r{n}"), previous.as_deref(), 1, 2);
        turn.save(store).await;
        turns.push(turn);
    }
    let expected = transcript(&turns.iter().collect::<Vec<_>>());

    let started = Instant::now();
    let context = store
        .load_context(T, "r99")
        .await
        .expect("load")
        .expect("known");
    let first = started.elapsed();
    const RUNS: u32 = 20;
    let started = Instant::now();
    for _ in 0..RUNS {
        store.load_context(T, "r99").await.expect("load");
    }
    let warm = started.elapsed() / RUNS;
    eprintln!(
        "[{label}] depth-100 load_context ({} items): first {first:?}, warm avg {warm:?}",
        context.len()
    );

    assert_eq!(context.len(), 300);
    assert_eq!(context, expected);
}

macro_rules! semantics_tests {
    ($label:literal, $fixture:expr) => {
        use super::*;

        #[tokio::test]
        async fn round_trip_equality() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            round_trip(&*f.store).await;
        }
        #[tokio::test]
        async fn traces_with_their_response() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            traces_live_and_die_with_their_response(&*f.store).await;
        }
        #[tokio::test]
        async fn context_order_across_chain() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            chain_of_three(&*f.store).await;
        }
        #[tokio::test]
        async fn delete_middle_keeps_successor_context() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            delete_keeps_successors(&*f.store).await;
        }
        #[tokio::test]
        async fn duplicate_save() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            duplicate_is_rejected_atomically(&*f.store).await;
        }
        #[tokio::test]
        async fn input_items_pages() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            input_items_pagination(&*f.store).await;
        }
        #[tokio::test]
        async fn find_item_newest() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            find_item_returns_newest(&*f.store).await;
        }
        #[tokio::test]
        async fn missing_previous() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            unknown_previous_means_empty_history(&*f.store).await;
        }
        #[tokio::test]
        async fn depth_100_chain() {
            let Some(f): Option<Fixture> = $fixture else {
                return;
            };
            deep_chain(&*f.store, $label).await;
        }
    };
}

mod memory {
    semantics_tests!(
        "memory",
        Some(Fixture {
            store: Box::new(MemoryStore::new()),
            _db: None
        })
    );
}

mod sqlite_memory {
    async fn open() -> Option<Fixture> {
        let store = SqliteStore::open_in_memory().await.expect("open");
        Some(Fixture {
            store: Box::new(store),
            _db: None,
        })
    }
    semantics_tests!("sqlite in-memory", open().await);
}

mod sqlite_file {
    async fn open() -> Option<Fixture> {
        let db = TempDb::new();
        let store = SqliteStore::open(&db.path).await.expect("open");
        Some(Fixture {
            store: Box::new(store),
            _db: Some(db),
        })
    }
    semantics_tests!("sqlite file", open().await);
}

#[cfg(feature = "postgres")]
mod postgres {
    async fn open() -> Option<Fixture> {
        let url = common::pg_schema_url().await?;
        let store = windlass_store::PgStore::open(&url).await.expect("open");
        Some(Fixture {
            store: Box::new(store),
            _db: None,
        })
    }
    semantics_tests!("postgres", open().await);
}

//! SQLite write path. History by reference (a response names the response
//! it continues instead of copying its references): deletes anywhere in a
//! chain (also twice, also forks), rows in the older copied layout. Saves
//! through the single writer: big saves, cancelled saves, concurrent saves
//! with duplicates among them; and the cost of one save, measured.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::time::Duration;

use common::{transcript, TempDb, Turn, T};
use rusqlite::Connection;
use windlass_engine::{ResponseStore, StoreError};
use windlass_store::SqliteStore;

async fn context(store: &SqliteStore, id: &str) -> Vec<windlass_protocol::Item> {
    store
        .load_context(T, id)
        .await
        .expect("load")
        .expect("known")
}

/// a <- b <- c <- d, plus a fork b <- e. Deleting b, then c, then a keeps
/// every surviving transcript unchanged.
#[tokio::test]
async fn repeated_deletes_and_forks_keep_transcripts() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let a = Turn::new("a", None, 2, 1);
    let b = Turn::new("b", Some("a"), 1, 2);
    let c = Turn::new("c", Some("b"), 1, 1);
    let d = Turn::new("d", Some("c"), 3, 1);
    let e = Turn::new("e", Some("b"), 1, 3);
    for t in [&a, &b, &c, &d, &e] {
        t.save(&store).await;
    }
    let full_d = transcript(&[&a, &b, &c, &d]);
    let full_e = transcript(&[&a, &b, &e]);

    for gone in ["b", "c", "a"] {
        assert!(store.delete(T, gone).await.expect("delete"), "{gone}");
        assert_eq!(context(&store, "d").await, full_d, "after deleting {gone}");
        assert_eq!(context(&store, "e").await, full_e, "after deleting {gone}");
    }
    // A new continuation of d sees the whole chain.
    let f = Turn::new("f", Some("d"), 1, 1);
    f.save(&store).await;
    assert_eq!(
        context(&store, "f").await,
        transcript(&[&a, &b, &c, &d, &f])
    );

    for id in ["d", "e", "f"] {
        assert!(store.delete(T, id).await.expect("delete"));
    }
    let conn = Connection::open(&db.path).expect("raw connection");
    for table in ["items", "response_items", "responses"] {
        let n: i64 = conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 0, "{table}");
    }
}

/// A database written before `history_parent` existed holds the history as
/// copied section-0 references and no parent; it still loads the same.
#[tokio::test]
async fn copied_history_rows_still_load() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let a = Turn::new("a", None, 1, 2);
    let b = Turn::new("b", Some("a"), 1, 1);
    a.save(&store).await;
    b.save(&store).await;

    let conn = Connection::open(&db.path).expect("raw connection");
    // Rewrite b into the old layout.
    conn.execute_batch(
        "INSERT INTO response_items (response_id, section, position, item_key) \
         SELECT 'b', 0, ROW_NUMBER() OVER (ORDER BY section, position) - 1, item_key \
         FROM response_items WHERE response_id = 'a'; \
         UPDATE responses SET history_parent = NULL WHERE id = 'b';",
    )
    .expect("old layout");
    assert_eq!(context(&store, "b").await, transcript(&[&a, &b]));

    let c = Turn::new("c", Some("b"), 1, 1);
    c.save(&store).await;
    assert!(store.delete(T, "b").await.expect("delete"));
    assert!(store.delete(T, "a").await.expect("delete"));
    assert_eq!(context(&store, "c").await, transcript(&[&a, &b, &c]));
}

/// Thousands of items in one save.
#[tokio::test]
async fn big_saves_round_trip() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let a = Turn::new("a", None, 5000, 300);
    let b = Turn::new("b", Some("a"), 257, 1);
    a.save(&store).await;
    b.save(&store).await;
    assert_eq!(context(&store, "b").await, transcript(&[&a, &b]));
    assert_eq!(
        store.get(T, "a").await.expect("get"),
        Some(a.resource.clone())
    );
    // The newest copy of an id wins, across chunk boundaries too.
    let found = store.find_item(T, "a_in4999").await.expect("find");
    assert_eq!(found.as_ref(), a.input.last());
}

/// A save dropped after it was handed to SQLite leaves no open transaction
/// behind: the next writes work and see a consistent state.
#[tokio::test]
async fn cancelled_save_does_not_wedge_the_writer() {
    let db = TempDb::new();
    for store in [
        SqliteStore::open_in_memory().await.expect("open"),
        SqliteStore::open(&db.path).await.expect("open"),
    ] {
        let a = Turn::new("a", None, 300, 300);
        let save = store.save(a.as_save(T, None));
        // Polled once (the batch is sent), then dropped.
        let _ = tokio::time::timeout(Duration::ZERO, save).await;

        let b = Turn::new("b", None, 1, 1);
        b.save(&store).await;
        assert_eq!(context(&store, "b").await, transcript(&[&b]));
        // `a` either landed whole or not at all.
        match store.load_context(T, "a").await.expect("load") {
            Some(items) => assert_eq!(items, transcript(&[&a])),
            None => assert_eq!(store.find_item(T, "a_in0").await.expect("find"), None),
        }
    }
}

/// Concurrent saves queue on the writer; a duplicate among them fails alone
/// and every other save lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_duplicates_fail_individually() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let tasks: Vec<_> = (0..64)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let turn = Turn::new(&format!("t{}", n % 32), None, 1, 1);
                let result = store.save(turn.as_save(T, None)).await;
                (n % 32, result)
            })
        })
        .collect();
    let mut saved = [0; 32];
    for task in tasks {
        match task.await.expect("task") {
            (n, Ok(())) => saved[n] += 1,
            (n, Err(StoreError::Duplicate(id))) => assert_eq!(id, format!("t{n}")),
            (_, Err(e)) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!(saved, [1; 32], "each id saved exactly once");
    for n in 0..32 {
        let id = format!("t{n}");
        let expected = Turn::new(&id, None, 1, 1);
        assert_eq!(context(&store, &id).await, transcript(&[&expected]));
    }
}

/// Saves that arrive together (group commit on the save thread shares
/// their commit; without it each commits alone) all land whole: transcript
/// and trace, and a duplicate id in the group fails alone with `Duplicate`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_arriving_together_land_with_their_traces() {
    for group_commit in [true, false] {
        let db = TempDb::new();
        let options = windlass_store::SqliteOptions {
            group_commit,
            ..Default::default()
        };
        let store = SqliteStore::open_with(&db.path, options)
            .await
            .expect("open");
        let tasks: Vec<_> = (0..48)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    // t0..t39, then t0..t7 again.
                    let id = format!("t{}", n % 40);
                    let turn = Turn::new(&id, None, 2, 1);
                    let trace = windlass_engine::Trace {
                        response_id: id.clone(),
                        ..Default::default()
                    };
                    let result = store.save(turn.as_save(T, Some(&trace))).await;
                    (id, result)
                })
            })
            .collect();
        let mut duplicates = 0;
        for task in tasks {
            match task.await.expect("task") {
                (_, Ok(())) => {}
                (id, Err(StoreError::Duplicate(d))) => {
                    assert_eq!(d, id);
                    duplicates += 1;
                }
                (_, Err(e)) => panic!("unexpected error: {e}"),
            }
        }
        assert_eq!(duplicates, 8, "group_commit {group_commit}");
        for n in 0..40 {
            let id = format!("t{n}");
            let expected = Turn::new(&id, None, 2, 1);
            assert_eq!(context(&store, &id).await, transcript(&[&expected]));
            let trace = store.trace(T, &id).await.expect("trace").expect("stored");
            assert_eq!(trace.response_id, id);
        }
    }
}

/// The cost of lone saves (one item in, one out, a trace), each
/// committed before the next starts: wall and process CPU per save, three
/// rounds of 8,000. A measurement, printed; the saves are checked to land.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run with --release --ignored --nocapture"]
async fn measure_lone_saves() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    for round in 0..3 {
        let turns: Vec<Turn> = (0..8000)
            .map(|i| Turn::new(&format!("r{round}_{i}"), None, 1, 1))
            .collect();
        let (started, cpu) = (std::time::Instant::now(), process_cpu_secs());
        for turn in &turns {
            let trace = windlass_engine::Trace {
                response_id: turn.id().to_owned(),
                ..Default::default()
            };
            store
                .save(turn.as_save(T, Some(&trace)))
                .await
                .expect("save");
        }
        let per_save = |secs: f64| secs * 1e6 / turns.len() as f64;
        println!(
            "round {round}: {:.1} µs wall, {:.1} µs process CPU per save",
            per_save(started.elapsed().as_secs_f64()),
            per_save(process_cpu_secs() - cpu)
        );
        let last = turns.last().expect("turns");
        assert!(store.trace(T, last.id()).await.expect("trace").is_some());
    }
}

/// utime + stime of this process, from `/proc/self/stat` (clock ticks of
/// 1/100 s).
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let after_name = stat.rsplit(')').next().expect("stat fields");
    let fields: Vec<f64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().expect("ticks"))
        .collect();
    fields.iter().sum::<f64>() / 100.0
}

//! SQLite-only behaviour: persistence across reopen, on-disk settings,
//! garbage collection of item rows, corruption and concurrent writers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{transcript, TempDb, Turn, T};
use rusqlite::Connection;
use windlass_engine::{ResponseStore, StoreError};
use windlass_store::SqliteStore;

/// A side connection to inspect or tamper with the file behind a store.
fn raw(db: &TempDb) -> Connection {
    Connection::open(&db.path).expect("raw connection")
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

#[tokio::test]
async fn persists_across_reopen() {
    let db = TempDb::new();
    let a = Turn::new("a", None, 2, 2);
    let b = Turn::new("b", Some("a"), 1, 3);
    {
        let store = SqliteStore::open(&db.path).await.expect("open");
        a.save(&store).await;
        b.save(&store).await;
        store.close().await;
    }
    let store = SqliteStore::open(&db.path).await.expect("reopen");
    assert_eq!(
        store.get(T, "b").await.expect("get"),
        Some(b.resource.clone())
    );
    let context = store.load_context(T, "b").await.expect("load");
    assert_eq!(context, Some(transcript(&[&a, &b])));
}

#[tokio::test]
async fn file_uses_wal_and_creates_schema() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    store.ping().await.expect("ping");
    let conn = raw(&db);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(mode, "wal");
    for table in ["items", "responses", "response_items"] {
        assert_eq!(count(&conn, table), 0, "{table}");
    }
}

/// History is referenced, not copied, and unreferenced rows are collected.
#[tokio::test]
async fn items_are_shared_and_collected() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    let a = Turn::new("a", None, 1, 2);
    let b = Turn::new("b", Some("a"), 1, 1);
    a.save(&store).await;
    b.save(&store).await;
    let conn = raw(&db);
    assert_eq!(count(&conn, "items"), 5);
    // b's history is a reference to a, not copies of a's 3 references.
    assert_eq!(count(&conn, "response_items"), 3 + 2);

    assert!(store.delete(T, "a").await.expect("delete"));
    assert_eq!(count(&conn, "items"), 5, "b still references a's items");
    // Deleting a moved its 3 references into b's history.
    assert_eq!(count(&conn, "response_items"), 3 + 2);
    assert!(store.delete(T, "b").await.expect("delete"));
    assert_eq!(count(&conn, "items"), 0);
    assert_eq!(count(&conn, "response_items"), 0);
}

#[tokio::test]
async fn bad_json_is_corrupt() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    Turn::new("a", None, 1, 1).save(&store).await;
    let conn = raw(&db);
    conn.execute("UPDATE items SET body = '{not json'", [])
        .expect("tamper");

    let err = store.load_context(T, "a").await.expect_err("corrupt item");
    assert!(matches!(err, StoreError::Corrupt(_)), "{err:?}");
    let err = store.find_item(T, "a_in0").await.expect_err("corrupt item");
    assert!(matches!(err, StoreError::Corrupt(_)), "{err:?}");
}

/// Concurrent writers queue on the write lock instead of failing as busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_saves_all_land() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    Turn::new("root", None, 1, 1).save(&store).await;
    let tasks: Vec<_> = (0..24)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                Turn::new(&format!("t{n}"), Some("root"), 1, 2)
                    .save(&store)
                    .await;
                store.load_context(T, &format!("t{n}")).await.expect("load")
            })
        })
        .collect();
    for task in tasks {
        let context = task.await.expect("task").expect("known");
        assert_eq!(context.len(), 2 + 3);
    }
}

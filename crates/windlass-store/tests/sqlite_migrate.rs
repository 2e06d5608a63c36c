//! The schema version and files from before it: databases migrated by sqlx
//! (versions in a `_sqlx_migrations` table, `user_version` 0) open without
//! being migrated again and keep their responses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{transcript, TempDb, Turn, T};
use rusqlite::Connection;
use windlass_engine::{ResponseStore, Trace};
use windlass_store::SqliteStore;

fn user_version(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version")
}

/// What sqlx's migrator left in a database it brought to version 2: the
/// schema of migrations 1 and 2 (on a file at version 3).
fn make_sqlx_era(conn: &Connection) {
    conn.execute_batch(
        "DROP TABLE IF EXISTS response_traces; \
         PRAGMA user_version = 0; \
         CREATE TABLE _sqlx_migrations ( \
             version BIGINT PRIMARY KEY, \
             description TEXT NOT NULL, \
             installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, \
             success BOOLEAN NOT NULL, \
             checksum BLOB NOT NULL, \
             execution_time BIGINT NOT NULL); \
         INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (1, 'init', TRUE, X'00', 1), (2, 'history parent', TRUE, X'00', 1);",
    )
    .expect("sqlx bookkeeping");
}

/// Takes away what migrations 4 (tenants), 7 (conversation activity), 11
/// (vector store description and expiry) and 13 (traces in the response
/// row) added (5 and 6 create their tables only if missing).
fn back_to_version_3(conn: &Connection) {
    conn.execute_batch(
        "DROP INDEX vector_stores_expiring; \
         ALTER TABLE vector_stores DROP COLUMN expired_at; \
         ALTER TABLE vector_stores DROP COLUMN description; \
         DROP INDEX conversations_by_activity; \
         ALTER TABLE conversations DROP COLUMN updated_at; \
         DROP INDEX items_by_public_id_tenant; \
         DROP INDEX responses_by_created_at; \
         CREATE INDEX items_by_public_id ON items (public_id); \
         ALTER TABLE responses DROP COLUMN trace; \
         ALTER TABLE responses DROP COLUMN tenant; \
         ALTER TABLE items DROP COLUMN tenant; \
         PRAGMA user_version = 3;",
    )
    .expect("schema 3");
}

/// Rows stored before tenants existed belong to the default tenant, and
/// only to it.
#[tokio::test]
async fn version_3_rows_become_the_default_tenants() {
    let db = TempDb::new();
    let a = Turn::new("a", None, 2, 2);
    {
        let store = SqliteStore::open(&db.path).await.expect("open");
        a.save(&store).await;
        store.close().await;
        back_to_version_3(&Connection::open(&db.path).expect("raw"));
    }
    let store = SqliteStore::open(&db.path).await.expect("open v3 file");
    assert_eq!(
        store.get(T, "a").await.expect("get"),
        Some(a.resource.clone())
    );
    assert_eq!(store.get("acme", "a").await.expect("get"), None);
    assert!(store.find_item(T, "a_in1").await.expect("find").is_some());
    assert_eq!(store.find_item("acme", "a_in1").await.expect("find"), None);
    let b = Turn::new("b", Some("a"), 1, 1);
    b.save(&store).await;
    assert_eq!(
        store.load_context(T, "b").await.expect("load"),
        Some(transcript(&[&a, &b]))
    );
    store.close().await;
    assert_eq!(user_version(&Connection::open(&db.path).expect("raw")), 13);
}

#[tokio::test]
async fn new_file_gets_current_version() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    store.close().await;
    let conn = Connection::open(&db.path).expect("raw");
    assert_eq!(user_version(&conn), 13);
    drop(conn);
    // Reopening applies nothing (migration 2 would fail a second time).
    let store = SqliteStore::open(&db.path).await.expect("reopen");
    store.ping().await.expect("ping");
}

#[tokio::test]
async fn sqlx_migrated_file_keeps_working() {
    let db = TempDb::new();
    let a = Turn::new("a", None, 2, 2);
    {
        // The same schema and rows sqlx's build wrote: the save trigger is
        // TEMP, so nothing of this build stays in the file but the version.
        let store = SqliteStore::open(&db.path).await.expect("open");
        a.save(&store).await;
        store.close().await;
        let conn = Connection::open(&db.path).expect("raw");
        back_to_version_3(&conn);
        make_sqlx_era(&conn);
        assert_eq!(user_version(&conn), 0);
    }

    let store = SqliteStore::open(&db.path)
        .await
        .expect("open sqlx-era file");
    assert_eq!(
        store.get(T, "a").await.expect("get"),
        Some(a.resource.clone())
    );
    assert_eq!(
        store.load_context(T, "a").await.expect("load"),
        Some(transcript(&[&a]))
    );
    let b = Turn::new("b", Some("a"), 1, 1);
    b.save(&store).await;
    assert_eq!(
        store.load_context(T, "b").await.expect("load"),
        Some(transcript(&[&a, &b]))
    );
    store.close().await;

    let conn = Connection::open(&db.path).expect("raw");
    assert_eq!(user_version(&conn), 13);
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM _sqlx_migrations", [], |r| r.get(0))
        .expect("sqlx rows");
    assert_eq!(rows, 2, "sqlx's bookkeeping is left for older builds");
}

/// A file sqlx migrated to version 1 only gets migration 2.
#[tokio::test]
async fn sqlx_file_at_version_1_gets_migration_2() {
    let db = TempDb::new();
    {
        let conn = Connection::open(&db.path).expect("raw");
        conn.execute_batch(include_str!("../migrations/0001_init.sql"))
            .expect("schema 1");
        make_sqlx_era(&conn);
        conn.execute("DELETE FROM _sqlx_migrations WHERE version = 2", [])
            .expect("version 1 only");
    }
    let store = SqliteStore::open(&db.path).await.expect("open");
    let a = Turn::new("a", None, 1, 1);
    let b = Turn::new("b", Some("a"), 1, 1);
    a.save(&store).await;
    b.save(&store).await;
    assert_eq!(
        store.load_context(T, "b").await.expect("load"),
        Some(transcript(&[&a, &b]))
    );
}

/// A file from a newer build (a schema this one does not know) is refused.
#[tokio::test]
async fn newer_schema_is_refused() {
    let db = TempDb::new();
    {
        let conn = Connection::open(&db.path).expect("raw");
        conn.execute_batch("PRAGMA user_version = 99")
            .expect("version");
    }
    let err = SqliteStore::open(&db.path).await.expect_err("newer schema");
    assert!(err.to_string().contains("newer"), "{err}");
}

/// A trace saved before migration 13 (in `response_traces`) is still read,
/// only by its tenant, and goes with its response.
#[tokio::test]
async fn a_trace_saved_before_version_13_is_read_and_deleted() {
    let db = TempDb::new();
    let a = Turn::new("a", None, 1, 1);
    let trace = Trace {
        response_id: "a".to_owned(),
        ..Default::default()
    };
    {
        let store = SqliteStore::open(&db.path).await.expect("open");
        store.save(a.as_save(T, Some(&trace))).await.expect("save");
        store.close().await;
        Connection::open(&db.path)
            .expect("raw")
            .execute_batch(
                "INSERT INTO response_traces (response_id, body) \
                     SELECT id, trace FROM responses WHERE trace IS NOT NULL; \
                 ALTER TABLE responses DROP COLUMN trace; \
                 PRAGMA user_version = 12;",
            )
            .expect("version 12 file");
    }
    let store = SqliteStore::open(&db.path).await.expect("open v12 file");
    assert_eq!(store.trace(T, "a").await.expect("trace"), Some(trace));
    assert_eq!(store.trace("acme", "a").await.expect("trace"), None);
    assert!(store.delete(T, "a").await.expect("delete"));
    assert_eq!(store.trace(T, "a").await.expect("trace"), None);
    store.close().await;
    let conn = Connection::open(&db.path).expect("raw");
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM response_traces", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 0, "the old trace row went with its response");
}

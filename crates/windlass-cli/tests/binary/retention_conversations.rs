//! Conversation retention through the binary: `windlass store prune
//! --conversations-idle-days N` on SQLite and on Postgres, and `[store]
//! conversation_retention_days` pruned by `windlass serve` at start.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use windlass_engine::{Conversation, ConversationStore, DEFAULT_TENANT};
use windlass_protocol::Item;
use windlass_store::{PgStore, SqliteStore};

use crate::replica_support::pg_schema_url;

const DAY: u64 = 86_400;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn conversation(id: &str, created_at: u64) -> Conversation {
    Conversation {
        id: id.to_owned(),
        object: "conversation".to_owned(),
        created_at,
        metadata: Default::default(),
    }
}

fn item(id: &str) -> Item {
    serde_json::from_value(json!({
        "type": "message", "id": id, "role": "user", "status": "completed",
        "content": [{"type": "input_text", "text": "hi"}]}))
    .unwrap()
}

/// conv_old idle for 40 days, conv_new created now, both with an item.
async fn seed(store: &dyn ConversationStore) {
    let old = now() - 40 * DAY;
    for (id, at) in [("conv_old", old), ("conv_new", now())] {
        store
            .create_conversation(
                DEFAULT_TENANT,
                &conversation(id, at),
                &[item(&format!("msg_{id}"))],
            )
            .await
            .expect("create conversation");
    }
}

/// Which of the seeded conversations are left.
async fn left(store: &dyn ConversationStore) -> Vec<&'static str> {
    let mut ids = Vec::new();
    for id in ["conv_old", "conv_new"] {
        if store
            .get_conversation(DEFAULT_TENANT, id)
            .await
            .expect("get")
            .is_some()
        {
            ids.push(id);
        }
    }
    ids
}

fn prune(db: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_windlass"))
        .args(["store", "prune", "--db", db])
        .args(extra)
        .env_remove("WINDLASS_CONFIG")
        .env_remove("WINDLASS_DB")
        .output()
        .expect("run windlass")
}

fn stdout_ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn temp_db(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("windlass-conv-ret-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("w.db").to_str().unwrap().to_owned();
    (dir, db)
}

#[tokio::test]
async fn store_prune_deletes_idle_conversations_on_sqlite() {
    let (dir, db) = temp_db("cli");
    let store = SqliteStore::open(&db).await.expect("open");
    seed(&store).await;
    store.close().await;

    let out = stdout_ok(prune(&db, &["--conversations-idle-days", "50"]));
    assert_eq!(out, "pruned 0 conversations idle for more than 50 days");
    let out = stdout_ok(prune(&db, &["--conversations-idle-days", "30"]));
    assert_eq!(out, "pruned 1 conversations idle for more than 30 days");
    let store = SqliteStore::open(&db).await.expect("open");
    assert_eq!(left(&store).await, vec!["conv_new"]);
    store.close().await;

    // 0 days is not an age.
    assert!(!prune(&db, &["--conversations-idle-days", "0"])
        .status
        .success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn store_prune_deletes_idle_conversations_on_postgres() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let store = PgStore::open(&db).await.expect("open");
    seed(&store).await;
    let out = stdout_ok(prune(&db, &["--conversations-idle-days", "30"]));
    assert_eq!(out, "pruned 1 conversations idle for more than 30 days");
    assert_eq!(left(&store).await, vec!["conv_new"]);
}

/// `serve` prunes at start (then hourly) with `conversation_retention_days`
/// from the environment (the `[store]` key's variable).
#[tokio::test]
async fn serve_prunes_idle_conversations() {
    let (dir, db) = temp_db("serve");
    let store = SqliteStore::open(&db).await.expect("open");
    seed(&store).await;
    store.close().await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_windlass"))
        .args(["serve", "--upstream", "http://127.0.0.1:1/v1"])
        .args(["--listen", "127.0.0.1:0", "--db", &db])
        .env_remove("WINDLASS_API_KEYS")
        .env_remove("WINDLASS_CONFIG")
        .env("WINDLASS_STORE__CONVERSATION_RETENTION_DAYS", "30")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut count = conversations_raw(&db);
    while count != 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        count = conversations_raw(&db);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(count, 1, "serve did not prune");
    let store = SqliteStore::open(&db).await.expect("open");
    assert_eq!(left(&store).await, vec!["conv_new"]);
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Conversations in the file, read without opening a store (serve holds it).
fn conversations_raw(db: &str) -> usize {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('SELECT COUNT(*) FROM conversations').fetchone()[0])")
        .arg(db)
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(usize::MAX)
}

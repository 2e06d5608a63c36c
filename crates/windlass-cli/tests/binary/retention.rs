//! Retention through the binary: `windlass store prune` on a database file,
//! and `[store] retention_days` pruned by `windlass serve` at start.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use windlass_engine::{NewResponse, ResponseStore, DEFAULT_TENANT};
use windlass_protocol::{Item, ResponseResource};
use windlass_store::SqliteStore;

const DAY: u64 = 86_400;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("windlass-ret-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn db(&self) -> String {
        self.0.join("w.db").to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn resource(id: &str, previous: Option<&str>, created_at: u64) -> ResponseResource {
    serde_json::from_value(json!({
        "id": id, "object": "response", "created_at": created_at, "status": "completed",
        "model": "m", "previous_response_id": previous,
        "output": [{"type": "message", "id": format!("msg_{id}_out"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "a", "annotations": []}]}],
        "tools": [], "tool_choice": "auto", "truncation": "disabled",
        "parallel_tool_calls": true, "text": {"format": {"type": "text"}},
        "top_p": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
        "top_logprobs": 0, "temperature": 1.0, "store": true, "background": false,
        "service_tier": "default", "metadata": {}
    }))
    .expect("resource")
}

/// old_a (40 days) <- young_b (now), and old_c (40 days) alone.
async fn seed(db: &str) {
    let store = SqliteStore::open(db).await.expect("open");
    let old = now() - 40 * DAY;
    for (id, prev, at) in [
        ("resp_old_a", None, old),
        ("resp_young_b", Some("resp_old_a"), now()),
        ("resp_old_c", None, old),
    ] {
        let input: Vec<Item> = vec![serde_json::from_value(json!({
            "type": "message", "id": format!("msg_{id}_in"), "role": "user", "status": "completed",
            "content": [{"type": "input_text", "text": "q"}]}))
        .unwrap()];
        store
            .save(NewResponse {
                tenant: DEFAULT_TENANT,
                response: &resource(id, prev, at),
                input: &input,
                trace: None,
            })
            .await
            .expect("save");
    }
    store.close().await;
}

/// Which of the seeded responses are left, and b's transcript length.
async fn left(db: &str) -> (Vec<&'static str>, usize) {
    let store = SqliteStore::open(db).await.expect("open");
    let mut ids = Vec::new();
    for id in ["resp_old_a", "resp_young_b", "resp_old_c"] {
        if store.get(DEFAULT_TENANT, id).await.expect("get").is_some() {
            ids.push(id);
        }
    }
    let ctx = store
        .load_context(DEFAULT_TENANT, "resp_young_b")
        .await
        .expect("load");
    store.close().await;
    (ids, ctx.map_or(0, |c| c.len()))
}

fn windlass(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_windlass"))
        .args(args)
        .env_remove("WINDLASS_CONFIG")
        .env_remove("WINDLASS_DB")
        .output()
        .expect("run windlass")
}

/// Runs a command that must succeed; its standard output, trimmed.
fn windlass_ok(args: &[&str]) -> String {
    let out = windlass(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test]
async fn store_prune_deletes_old_responses_and_keeps_referenced_history() {
    let dir = TempDir::new("cli");
    let db = dir.db();
    seed(&db).await;

    let out = windlass_ok(&["store", "prune", "--older-than-days", "50", "--db", &db]);
    assert_eq!(out, "pruned 0 responses older than 50 days");

    let out = windlass_ok(&["store", "prune", "--older-than-days", "30", "--db", &db]);
    assert_eq!(out, "pruned 2 responses older than 30 days");
    // b still continues from a's items: input + output of both.
    assert_eq!(left(&db).await, (vec!["resp_young_b"], 4));

    // Without an age anywhere it refuses; 0 days is not an age.
    let out = windlass(&["store", "prune", "--db", &db]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--older-than-days"));
    let out = windlass(&["store", "prune", "--older-than-days", "0", "--db", &db]);
    assert!(!out.status.success());
}

#[tokio::test]
async fn store_prune_reads_the_config_file() {
    let dir = TempDir::new("cfg");
    let db = dir.db();
    seed(&db).await;
    let config = dir.0.join("windlass.toml");
    std::fs::write(
        &config,
        format!("db = {db:?}\n[store]\nretention_days = 30\n"),
    )
    .unwrap();
    windlass_ok(&["store", "prune", "--config", config.to_str().unwrap()]);
    assert_eq!(left(&db).await, (vec!["resp_young_b"], 4));
}

/// `serve` prunes at start (then hourly) when `retention_days` is set.
#[tokio::test]
async fn serve_prunes_with_retention_days() {
    let dir = TempDir::new("serve");
    let db = dir.db();
    seed(&db).await;
    let config = dir.0.join("windlass.toml");
    std::fs::write(&config, "[store]\nretention_days = 30\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_windlass"))
        .args([
            "serve",
            "--upstream",
            "http://127.0.0.1:1/v1",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--db", &db, "--config", config.to_str().unwrap()])
        .env_remove("WINDLASS_API_KEYS")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = left_raw(&db);
    while seen != 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        seen = left_raw(&db);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen, 1, "serve did not prune");
    assert_eq!(left(&db).await, (vec!["resp_young_b"], 4));
}

/// Responses in the file, read without opening a store (serve holds it).
fn left_raw(db: &str) -> usize {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('SELECT COUNT(*) FROM responses').fetchone()[0])")
        .arg(Path::new(db))
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(usize::MAX)
}

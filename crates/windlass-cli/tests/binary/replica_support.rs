//! Real `windlass serve` processes sharing one Postgres database (a fresh
//! schema of `WINDLASS_TEST_PG`, which `scripts/postgres.sh` sets).

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use windlass_testkit::http::send;
use windlass_testkit::live::created_id;

/// A fresh schema as a database URL, or `None` (test skipped, and says so)
/// when `WINDLASS_TEST_PG` is unset.
pub(crate) async fn pg_schema_url() -> Option<String> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let Ok(base) = std::env::var("WINDLASS_TEST_PG") else {
        eprintln!("WINDLASS_TEST_PG is not set: skipping (scripts/postgres.sh sets it)");
        return None;
    };
    let schema = format!(
        "r_{}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
        .await
        .expect("connect to WINDLASS_TEST_PG");
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .await
        .expect("create schema");
    drop(client);
    let _ = driver.await;
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options=-csearch_path%3D{schema}"))
}

/// One `windlass serve` process; killed (SIGKILL) on drop.
pub(crate) struct Replica {
    pub child: Child,
    pub base: String,
    pub client: reqwest::Client,
}

impl Replica {
    /// Starts a replica on a free port with `db` and `upstream`, and waits
    /// until it answers `/health`.
    pub(crate) async fn start(db: &str, upstream: &str, extra: &[&str]) -> Replica {
        let port = crate::ports::free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--upstream", upstream, "--db", db])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .env_remove("WINDLASS_API_KEYS")
            .env_remove("WINDLASS_CONFIG")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start windlass");
        let mut replica = Replica {
            child,
            base: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
        };
        for _ in 0..300 {
            if let Ok(r) = replica.client.get(replica.url("/health")).send().await {
                if r.status().is_success() {
                    return replica;
                }
            }
            if let Ok(Some(status)) = replica.child.try_wait() {
                panic!("windlass exited at start: {status}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = replica.child.kill();
        panic!("windlass did not start");
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        send(self.client.post(self.url(path)).json(body)).await
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        send(self.client.get(self.url(path))).await
    }

    pub(crate) async fn delete(&self, path: &str) -> (u16, Value) {
        send(self.client.delete(self.url(path))).await
    }

    /// Opens a streamed create and reads until `response.created`; returns
    /// the open body and the response id.
    pub(crate) async fn stream_until_created(&self, body: &Value) -> (reqwest::Response, String) {
        let mut body = body.clone();
        body["stream"] = Value::Bool(true);
        let mut resp = self
            .client
            .post(self.url("/v1/responses"))
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(resp.status().as_u16(), 200);
        let mut raw = String::new();
        let id = loop {
            if let Some(id) = created_id(&raw) {
                break id;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
                .await
                .expect("response.created in time")
                .expect("stream")
                .expect("stream open");
            raw.push_str(&String::from_utf8_lossy(&chunk));
        };
        (resp, id)
    }

    /// Kills the process at once (SIGKILL: no shutdown, no final saves).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

//! Durability across a crash of the process: every stored response whose
//! answer was acknowledged (its JSON body, or its stream's terminal event,
//! reached the client) is there after `kill -9` of a real `windlass serve`
//! under concurrent load, when the server starts again on the same file.
//! Saves share commits (the save thread) and checkpoints run beside them,
//! so the kill lands at any point of a commit or a checkpoint.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use windlass_testkit::{FakeUpstream, Reply};

/// Generous bounds for a loaded machine; nothing asserts a duration.
const WAIT: Duration = Duration::from_secs(60);
/// Clients sending stored requests at once, each alternating JSON and SSE.
const CLIENTS: usize = 12;

struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    async fn start(upstream: &FakeUpstream, db: &Path) -> Serve {
        let port = crate::ports::free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--upstream", &upstream.base_url()])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(db)
            .env("RUST_LOG", "warn")
            .env_remove("WINDLASS_API_KEYS")
            .spawn()
            .expect("spawn windlass serve");
        let serve = Serve {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let ok = reqwest::get(format!("{}/health", serve.base))
                .await
                .is_ok_and(|r| r.status().is_success());
            if ok {
                return serve;
            }
            assert!(tokio::time::Instant::now() < deadline, "never healthy");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: no shutdown, no checkpoint, no close.
    fn kill9(&mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windlass-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("windlass.db")
}

/// One stored request; the id if its answer was acknowledged as completed.
async fn one(client: &reqwest::Client, base: &str, stream: bool) -> Option<String> {
    let body = json!({"model": "m", "input": "remember this", "stream": stream});
    let resp = client
        .post(format!("{base}/v1/responses"))
        .json(&body)
        .send()
        .await
        .ok()?;
    if resp.status() != 200 {
        return None;
    }
    if !stream {
        let v: Value = resp.json().await.ok()?;
        return (v["status"] == "completed").then(|| v["id"].as_str().map(str::to_owned))?;
    }
    // The terminal event is the acknowledgement: read until it arrived.
    let mut text = String::new();
    let mut chunks = resp.bytes_stream();
    while let Some(Ok(chunk)) = chunks.next().await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(at) = text.find("event: response.completed\ndata: ") {
            let rest = &text[at..];
            let Some(end) = rest.find("\n\n") else {
                continue;
            };
            let data = &rest["event: response.completed\ndata: ".len()..end];
            let v: Value = serde_json::from_str(data).ok()?;
            return v["response"]["id"].as_str().map(str::to_owned);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_responses_survive_kill_9_under_load() {
    let upstream = FakeUpstream::start().await;
    upstream.set_record_requests(false);
    upstream.set_default(
        Reply::text("stored before it was acknowledged").first_byte_delay(Duration::from_millis(2)),
    );
    let db = temp_db("load");
    let mut serve = Serve::start(&upstream, &db).await;
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let client = reqwest::Client::new();

    let mut workers = Vec::new();
    for n in 0..CLIENTS {
        let (client, base, acked) = (client.clone(), serve.base.clone(), acked.clone());
        workers.push(tokio::spawn(async move {
            for i in 0.. {
                match one(&client, &base, (n + i) % 2 == 1).await {
                    Some(id) => acked.lock().unwrap().push(id),
                    // The server is gone: stop.
                    None if i > 0 => return,
                    None => {}
                }
            }
        }));
    }
    // Let enough commits and checkpoints happen, then kill in the middle.
    let deadline = tokio::time::Instant::now() + WAIT;
    while acked.lock().unwrap().len() < 400 {
        assert!(tokio::time::Instant::now() < deadline, "too few responses");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    serve.kill9();
    for w in workers {
        let _ = w.await;
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 400, "{} acknowledged", acked.len());

    let serve = Serve::start(&upstream, &db).await;
    let mut lost = Vec::new();
    for id in &acked {
        let got = client
            .get(format!("{}/v1/responses/{id}", serve.base))
            .send()
            .await
            .expect("get");
        let status = got.status();
        let body: Value = got.json().await.unwrap_or_default();
        if status != 200 || body["status"] != "completed" {
            lost.push(id.clone());
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged responses lost after kill -9: {lost:?}",
        lost.len(),
        acked.len()
    );
    drop(serve);
    let _ = std::fs::remove_dir_all(db.parent().unwrap());
}

/// The acknowledgement and the kill back to back: a JSON answer read in
/// full, then a stream read up to its terminal event (before `[DONE]` and
/// the end of the body), each followed at once by `kill -9`; the next
/// process on the same file serves both responses, completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_right_after_the_acknowledgement_keeps_the_response() {
    let upstream = FakeUpstream::start().await;
    upstream.set_record_requests(false);
    upstream.set_default(Reply::text("acknowledged, then killed"));
    let db = temp_db("at-once");
    let client = reqwest::Client::new();
    let mut kept = Vec::new();
    for stream in [false, true] {
        let mut serve = Serve::start(&upstream, &db).await;
        let id = one(&client, &serve.base, stream).await;
        serve.kill9();
        kept.push(id.expect("the response was acknowledged as completed"));
    }
    let serve = Serve::start(&upstream, &db).await;
    for id in &kept {
        let got = client
            .get(format!("{}/v1/responses/{id}", serve.base))
            .send()
            .await
            .expect("get");
        assert_eq!(got.status(), 200, "{id} lost after kill -9");
        let body: Value = got.json().await.unwrap();
        assert_eq!(body["status"], "completed", "{body}");
        assert_eq!(
            body["output"][0]["content"][0]["text"],
            "acknowledged, then killed"
        );
    }
    drop(serve);
    let _ = std::fs::remove_dir_all(db.parent().unwrap());
}

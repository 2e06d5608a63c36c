//! Graceful shutdown of a real `windlass serve` process on a real SIGTERM:
//! `/ready` turns 503 and new requests are refused while a running stream
//! finishes within the grace period; a run longer than the grace period is
//! cancelled, stored `cancelled`, and the process exits 0 either way; a
//! second SIGTERM cuts the grace period short.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use serde_json::{json, Value};
use windlass_testkit::check::assert_api_error;
use windlass_testkit::live::LiveStream;
use windlass_testkit::{FakeUpstream, Reply};

/// Generous bounds for a loaded machine; nothing asserts a duration.
const WAIT: Duration = Duration::from_secs(60);

struct Serve {
    child: Child,
    base: String,
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windlass-drain-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Serve {
    async fn start(upstream: &FakeUpstream, dir: &Path, grace_secs: u64) -> Serve {
        let config = dir.join("windlass.toml");
        std::fs::write(
            &config,
            format!("[server]\nshutdown_grace_secs = {grace_secs}\n"),
        )
        .unwrap();
        let port = crate::ports::free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--upstream", &upstream.base_url()])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(dir.join("windlass.db"))
            .arg("--config")
            .arg(&config)
            .env("RUST_LOG", "warn")
            .spawn()
            .expect("spawn windlass serve");
        let serve = Serve {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        while serve.ready().await != Some(200) {
            assert!(tokio::time::Instant::now() < deadline, "never ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        serve
    }

    async fn ready(&self) -> Option<u16> {
        // A fresh connection each time, as a kubelet probe.
        let resp = reqwest::Client::new()
            .get(format!("{}/ready", self.base))
            .send()
            .await
            .ok()?;
        Some(resp.status().as_u16())
    }

    fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    async fn wait_ready_503(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match self.ready().await {
                Some(503) => return,
                other => assert!(
                    tokio::time::Instant::now() < deadline,
                    "/ready never turned 503 (last: {other:?})"
                ),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn exit_status(mut self) -> ExitStatus {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if tokio::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("windlass serve did not exit after SIGTERM");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stream of `chunks` deltas, one per `every`.
fn slow_text(chunks: usize, every: Duration) -> Reply {
    Reply::text("word ".repeat(chunks))
        .chunk_chars(5)
        .delay_between_chunks(every)
}

/// Opens a streamed response on `serve` and waits for its first text delta.
async fn stream_under_way(serve: &Serve) -> LiveStream {
    let client = reqwest::Client::new();
    let body = json!({"model": "m", "input": "hi"});
    let mut live = LiveStream::open_at(&client, &serve.base, &body).await;
    assert!(live.read_until("response.output_text.delta", WAIT).await);
    live
}

/// The response `id` as a new process on the same database returns it.
async fn stored_after_restart(upstream: &FakeUpstream, dir: &Path, id: &str) -> Value {
    let again = Serve::start(upstream, dir, 60).await;
    reqwest::get(format!("{}/v1/responses/{id}", again.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_running_stream_finishes_within_the_grace_period_while_new_work_is_refused() {
    let upstream = FakeUpstream::start().await;
    upstream.push(slow_text(30, Duration::from_millis(100)));
    let dir = temp_dir("finish");
    let serve = Serve::start(&upstream, &dir, 60).await;
    let live = stream_under_way(&serve).await;
    let id = live.response_id();

    serve.sigterm();
    serve.wait_ready_503().await;
    assert_eq!(
        reqwest::get(format!("{}/health", serve.base))
            .await
            .expect("health")
            .status(),
        200,
        "still alive while draining"
    );
    // A new request, on a new connection, is refused and told to go away.
    let refused = reqwest::Client::new()
        .post(format!("{}/v1/responses", serve.base))
        .json(&json!({"model": "m", "input": "late"}))
        .send()
        .await
        .expect("answered");
    assert_eq!(
        refused
            .headers()
            .get("connection")
            .and_then(|v| v.to_str().ok()),
        Some("close")
    );
    let status = refused.status().as_u16();
    let body: Value = refused.json().await.expect("JSON error");
    let err = assert_api_error(status, &body, 503);
    assert_eq!(err["code"], "server_shutting_down");

    let cap = live.finish(WAIT).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.completed");
    assert!(cap.done, "[DONE] sent");
    assert_eq!(
        cap.final_response()["output"][0]["content"][0]["text"],
        "word ".repeat(30)
    );
    assert!(serve.exit_status().await.success());
    assert_eq!(
        upstream.requests().len(),
        1,
        "the refused request never ran"
    );

    // Stored as it ended.
    let got = stored_after_restart(&upstream, &dir, &id).await;
    assert_eq!(got["status"], "completed");
}

#[tokio::test]
async fn a_run_longer_than_the_grace_period_is_cancelled_and_stored() {
    let upstream = FakeUpstream::start().await;
    // About a minute of output: far past a one-second grace period.
    upstream.push(slow_text(120, Duration::from_millis(500)));
    let dir = temp_dir("cancel");
    let serve = Serve::start(&upstream, &dir, 1).await;
    let live = stream_under_way(&serve).await;
    let id = live.response_id();

    serve.sigterm();
    let cap = live.finish(WAIT).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.cancelled");
    assert!(serve.exit_status().await.success());

    let got = stored_after_restart(&upstream, &dir, &id).await;
    assert_eq!(got["status"], "cancelled", "{got}");
    assert_eq!(&got, cap.final_response());
}

#[tokio::test]
async fn a_second_sigterm_cancels_at_once() {
    let upstream = FakeUpstream::start().await;
    upstream.push(slow_text(120, Duration::from_millis(500)));
    let dir = temp_dir("twice");
    // A grace period far longer than the test may take.
    let serve = Serve::start(&upstream, &dir, 3600).await;
    let live = stream_under_way(&serve).await;
    serve.sigterm();
    serve.wait_ready_503().await;
    serve.sigterm();
    let cap = live.finish(WAIT).await;
    cap.assert_well_formed();
    assert_eq!(*cap.types().last().unwrap(), "response.cancelled");
    assert!(serve.exit_status().await.success());
}

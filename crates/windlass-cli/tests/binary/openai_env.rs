//! OpenAI's own variables as the last resort: with no `--upstream` (and no
//! upstream in a config), `windlass serve` and `windlass run` use
//! `OPENAI_BASE_URL`, and `OPENAI_API_KEY` as the upstream's bearer token,
//! as OpenAI's SDKs do. Real binary, real HTTP.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use windlass_testkit::{FakeUpstream, Reply};

fn bare_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_windlass"));
    for var in [
        "WINDLASS_UPSTREAM_URL",
        "WINDLASS_UPSTREAM_API_KEY",
        "WINDLASS_CONFIG",
        "WINDLASS_MODEL",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn bearer(up: &FakeUpstream) -> Option<String> {
    up.last_recorded_request()?
        .header("authorization")
        .map(str::to_owned)
}

#[tokio::test]
async fn run_uses_openai_base_url_and_key() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("from the env upstream"));
    let base = up.base_url();
    let out = tokio::task::spawn_blocking(move || {
        bare_command()
            .args(["run", "hi", "--model", "m"])
            .env("OPENAI_BASE_URL", base)
            .env("OPENAI_API_KEY", "sk-from-env")
            .output()
            .expect("run")
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "from the env upstream"
    );
    assert_eq!(bearer(&up).as_deref(), Some("Bearer sk-from-env"));
}

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serve_uses_openai_base_url_and_key() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("served via env"));
    let port = crate::ports::free_port();
    let dir = std::env::temp_dir().join(format!("windlass-openai-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _serve = Serve(
        bare_command()
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(dir.join("windlass.db"))
            .env("OPENAI_BASE_URL", up.base_url())
            .env("OPENAI_API_KEY", "sk-serve-env")
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while client.get(format!("{base}/health")).send().await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "never up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resp: Value = client
        .post(format!("{base}/v1/responses"))
        .json(&json!({"model": "m", "input": "hi"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resp["status"], "completed", "{resp}");
    assert_eq!(resp["output"][0]["content"][0]["text"], "served via env");
    assert_eq!(bearer(&up).as_deref(), Some("Bearer sk-serve-env"));
}

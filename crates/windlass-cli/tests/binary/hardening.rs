//! Hardening (issue 16) of the real `windlass serve` process: blank keys
//! refuse to start, and a `server_url` password reaches no answer, log line
//! or database byte. The rest runs in process (windlass's tests/gateway).

use std::time::Duration;

use serde_json::{json, Value};
use windlass_testkit::Reply;

fn hi() -> Value {
    json!({"model": "m", "input": "hi"})
}

#[test]
fn the_binary_refuses_to_start_with_blank_keys() {
    for keys in [",", "", " , "] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--upstream", "http://127.0.0.1:1/v1"])
            .args([
                "--listen",
                "127.0.0.1:0",
                "--db",
                "/nonexistent/never-opened.db",
            ])
            .env("WINDLASS_API_KEYS", keys)
            .output()
            .expect("run windlass");
        assert!(!out.status.success(), "{keys:?} started");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("empty or blank"), "{keys:?}: {err}");
    }
}

/// The real binary at debug log level: a `server_url` password appears in
/// no answer, no log line and no database byte.
#[tokio::test]
async fn a_server_url_password_is_never_echoed_logged_or_stored() {
    const SECRET: &str = "hunter2-pw-5c1e";
    let upstream = windlass_testkit::FakeUpstream::start().await;
    upstream.push(Reply::text("stored answer"));
    let port = crate::ports::free_port();
    let dir = std::env::temp_dir().join(format!("windlass-secret-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = std::fs::File::create(dir.join("log")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_windlass"))
        .args(["serve", "--upstream", &upstream.base_url()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--db", dir.join("w.db").to_str().unwrap()])
        .args(["--mcp-allow-host", "127.0.0.1"])
        .env("RUST_LOG", "debug")
        .env_remove("WINDLASS_API_KEYS")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start windlass");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let mut up = false;
    for _ in 0..200 {
        if client.get(format!("{base}/health")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !up {
        let _ = child.kill();
        panic!("windlass did not start");
    }
    let mut answers = String::new();
    for url in [
        format!("http://alice:{SECRET}@127.0.0.1:9/mcp"),
        format!("http://{SECRET}@127.0.0.1:9/mcp"),
    ] {
        let body = json!({"model": "m", "input": "hi", "tools": [
            {"type": "mcp", "server_label": "s", "server_url": url}
        ]});
        let resp = client
            .post(format!("{base}/v1/responses"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400);
        answers.push_str(&resp.text().await.unwrap());
    }
    let resp = client
        .post(format!("{base}/v1/responses"))
        .json(&hi())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200, "the store is in use");
    // SIGTERM: the server checkpoints and closes its files.
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    assert!(answers.contains("credentials"), "{answers}");
    assert!(!answers.contains(SECRET), "{answers}");
    let log = std::fs::read_to_string(dir.join("log")).unwrap();
    assert!(log.contains("windlass serving"), "{log}");
    assert!(!log.contains(SECRET), "{log}");
    for f in ["w.db", "w.db-wal"] {
        let bytes = std::fs::read(dir.join(f)).unwrap_or_default();
        let found = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        assert!(!found, "{f} holds the password");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

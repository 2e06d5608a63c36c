//! `[webhooks]`: a background response's end reaches the configured URL as
//! a signed Standard Webhook; a receiver that fails first gets the same
//! `webhook-id` again, and every attempt's signature verifies. Real binary,
//! real HTTP.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use windlass_governance::WebhookSecret;
use windlass_testkit::{FakeUpstream, Reply};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// One delivery as received: its headers and body.
type Delivery = (HeaderMap, Vec<u8>);

#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<Delivery>>>);

impl Received {
    fn all(&self) -> Vec<Delivery> {
        self.0.lock().unwrap().clone()
    }
}

/// A receiver that answers 503 to the first attempt and 200 after.
async fn receiver() -> (String, Received) {
    let got = Received::default();
    let seen = got.clone();
    let app = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let seen = seen.clone();
            async move {
                let mut all = seen.0.lock().unwrap();
                all.push((headers, body.to_vec()));
                if all.len() == 1 {
                    StatusCode::SERVICE_UNAVAILABLE
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

#[tokio::test]
async fn a_background_response_is_announced_signed_and_retried_under_one_id() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("done in the background"));
    let (hook, got) = receiver().await;
    let dir = tempfile_dir();
    let config = dir.join("windlass.toml");
    std::fs::write(
        &config,
        format!(
            "[upstream]\nurl = \"{}\"\n\n[webhooks]\nurl = \"{hook}\"\nsecret = \"{SECRET}\"\nmax_attempts = 3\n",
            up.base_url()
        ),
    )
    .unwrap();
    let port = crate::ports::free_port();
    let _serve = Serve(
        Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--config")
            .arg(&config)
            .arg("--db")
            .arg(dir.join("windlass.db"))
            .env_remove("WINDLASS_UPSTREAM_URL")
            .env_remove("WINDLASS_CONFIG")
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
    let queued: Value = client
        .post(format!("{base}/v1/responses"))
        .json(&json!({"model": "m", "input": "hi", "background": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = queued["id"].as_str().expect("id").to_owned();
    while got.all().len() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no second delivery: {:?}",
            got.all().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let all = got.all();
    let secret = WebhookSecret::parse(SECRET).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (headers, body) in &all {
        let wid = header(headers, "webhook-id");
        secret
            .verify(
                wid,
                header(headers, "webhook-timestamp"),
                header(headers, "webhook-signature"),
                body,
                now,
            )
            .expect("signature verifies");
        let event: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(event["type"], "response.completed", "{event}");
        assert_eq!(event["data"]["id"], id.as_str());
        assert_eq!(event["id"], wid);
    }
    assert_eq!(
        header(&all[0].0, "webhook-id"),
        header(&all[1].0, "webhook-id")
    );
    // A wrong secret does not verify.
    let other = WebhookSecret::parse("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
    let (h, b) = &all[1];
    assert!(other
        .verify(
            header(h, "webhook-id"),
            header(h, "webhook-timestamp"),
            header(h, "webhook-signature"),
            b,
            now
        )
        .is_err());
    // The response the event names is there, completed.
    let r: Value = client
        .get(format!("{base}/v1/responses/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["status"], "completed", "{r}");
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "windlass-webhooks-{}-{}",
        std::process::id(),
        windlass_protocol::ids::new_id("t")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

//! Standard Webhooks signatures on real HTTP: background-style deliveries
//! with retries, and the policy webhook's signed requests. Signatures are
//! checked by Windlass's verifier and, where a Python with the reference
//! library `standardwebhooks` (PyPI) is found (`WINDLASS_TEST_PYTHON`, else
//! the repository's `.venv-test`), by that library too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};
use windlass_engine::CallDecision;
use windlass_governance::{DeliveryConfig, DeliveryError, WebhookDelivery, WebhookSecret};
use windlass_protocol::{ResponseStatus, WebhookEvent};

#[derive(Clone, Debug)]
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

type Log = Arc<Mutex<Vec<Received>>>;

/// A receiver answering the statuses in `answers` in turn (then 200).
async fn receiver(answers: Vec<u16>) -> (String, Log) {
    let log: Log = Arc::default();
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let seen = log.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let (seen, answers) = (seen.clone(), answers.clone());
            async move {
                let h = |n: &str| {
                    headers
                        .get(n)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned()
                };
                seen.lock().unwrap().push(Received {
                    id: h("webhook-id"),
                    timestamp: h("webhook-timestamp"),
                    signature: h("webhook-signature"),
                    body: body.to_vec(),
                });
                let status = answers.lock().unwrap().next().unwrap_or(200);
                let answer = if status == 200 {
                    json!({"decision": "allow"}).to_string()
                } else {
                    String::new()
                };
                (StatusCode::from_u16(status).unwrap(), answer)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hook"), log)
}

fn quick(url: &str, secret: WebhookSecret) -> DeliveryConfig {
    DeliveryConfig {
        timeout: Duration::from_secs(5),
        max_attempts: 3,
        backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        ..DeliveryConfig::new(url, secret)
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A Python that has the reference library, if there is one.
fn python() -> Option<PathBuf> {
    let candidates = std::env::var_os("WINDLASS_TEST_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-test/bin/python")]);
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", "import standardwebhooks"])
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(python);
        }
    }
    eprintln!("no Python with `standardwebhooks`: the reference library's check is not run");
    None
}

/// Verifies with the reference library; its exception text on failure.
fn reference_verify(python: &PathBuf, secret: &str, r: &Received) -> Result<(), String> {
    let script = r#"
import json, sys
from standardwebhooks.webhooks import Webhook
secret, wid, ts, sig = sys.argv[1:5]
body = sys.stdin.buffer.read()
Webhook(secret).verify(body, {"webhook-id": wid, "webhook-timestamp": ts, "webhook-signature": sig})
"#;
    let mut child = Command::new(python)
        .args(["-c", script, secret, &r.id, &r.timestamp, &r.signature])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&r.body).unwrap();
    let out = child.wait_with_output().unwrap();
    out.status
        .success()
        .then_some(())
        .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn a_delivery_is_retried_under_one_id_and_every_attempt_verifies() {
    let (url, log) = receiver(vec![503, 429]).await;
    let (secret, text) = WebhookSecret::generate();
    let delivery = WebhookDelivery::new(quick(&url, secret.clone())).unwrap();
    let event = WebhookEvent::for_response("resp_1", ResponseStatus::Completed, now()).unwrap();
    let body = serde_json::to_vec(&event).unwrap();
    let done = delivery.send(&event.id, &body).await.expect("delivered");
    assert_eq!((done.attempts, done.status), (3, 200));
    let got = log.lock().unwrap().clone();
    assert_eq!(got.len(), 3);
    let python = python();
    for r in &got {
        assert_eq!(r.id, event.id, "one id for every attempt");
        assert_eq!(r.body, body);
        secret
            .verify(&r.id, &r.timestamp, &r.signature, &r.body, now())
            .expect("verifies");
        if let Some(py) = &python {
            reference_verify(py, &text, r).expect("the reference library verifies it");
        }
    }
    let sent: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(sent["type"], "response.completed");
    assert_eq!(sent["data"]["id"], "resp_1");
    // A tampered body fails the reference library too (it can fail).
    if let Some(py) = &python {
        let mut forged = got[0].clone();
        forged.body = br#"{"type":"response.failed"}"#.to_vec();
        assert!(reference_verify(py, &text, &forged).is_err());
    }
}

#[tokio::test]
async fn a_refusal_is_not_retried_and_an_absent_receiver_is_given_up() {
    let (url, log) = receiver(vec![400]).await;
    let (secret, _) = WebhookSecret::generate();
    let delivery = WebhookDelivery::new(quick(&url, secret.clone())).unwrap();
    let err = delivery.send("evt_1", b"{}").await.expect_err("refused");
    assert_eq!(
        err,
        DeliveryError::Refused {
            status: 400,
            attempts: 1
        }
    );
    assert_eq!(log.lock().unwrap().len(), 1);

    // Port 9 (discard) on loopback: nothing listens.
    let dead = WebhookDelivery::new(quick("http://127.0.0.1:9/hook", secret)).unwrap();
    match dead.send("evt_2", b"{}").await {
        Err(DeliveryError::GaveUp { attempts: 3, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_policy_webhook_signs_its_requests_when_it_has_a_secret() {
    let (url, log) = receiver(vec![]).await;
    let (secret, text) = WebhookSecret::generate();
    let g = gov(&format!(
        "[webhook]\nurl = \"{url}\"\ntimeout_ms = 2000\nsecret = \"{text}\"\n"
    ));
    assert_eq!(
        ask(
            &g,
            &builtin("read_file"),
            json!({"path": "a"}),
            &Ask::default()
        )
        .await,
        CallDecision::Allow
    );
    let got = log.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert!(got[0].id.starts_with("msg_"), "{:?}", got[0].id);
    secret
        .verify(
            &got[0].id,
            &got[0].timestamp,
            &got[0].signature,
            &got[0].body,
            now(),
        )
        .expect("verifies");
    if let Some(py) = python() {
        reference_verify(&py, &text, &got[0]).expect("the reference library verifies it");
    }
    let call: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(call["mcp_tool"], "read_file");

    // Without a secret nothing is signed (as before).
    let (url, log) = receiver(vec![]).await;
    let g = gov(&format!("[webhook]\nurl = \"{url}\"\ntimeout_ms = 2000\n"));
    ask(
        &g,
        &builtin("read_file"),
        json!({"path": "a"}),
        &Ask::default(),
    )
    .await;
    assert_eq!(log.lock().unwrap()[0].signature, "");
}

#[test]
fn a_bad_secret_is_refused_with_the_config() {
    let parsed = toml::from_str::<windlass_governance::GovernanceConfig>(
        "[webhook]\nurl = \"http://x/\"\nsecret = \"whsec_!!\"\n",
    );
    assert!(parsed.is_err());
    let both: windlass_governance::GovernanceConfig = toml::from_str(
        "[webhook]\nurl = \"http://x/\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\nsecret_env = \"X\"\n",
    )
    .unwrap();
    assert!(both.validate().is_err());
}

//! Bearer JWTs as keys through the real binary (`[auth.oidc]`): a local
//! JWKS server (axum) and ES256 tokens signed in the test. A good token is
//! a key of its tenant with its scopes, beside a static key; every bad one
//! (signature, audience, issuer, expired, `alg: none`, unknown `kid`) is
//! the same 401; a stream or WebSocket opened with a token ends at its
//! expiry with a `token_expired` error.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::routing::get;
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use futures::{SinkExt, StreamExt};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use windlass_testkit::{FakeUpstream, Reply};

use crate::replica_support::Replica;

const ISSUER: &str = "https://login.example.test/";
const AUDIENCE: &str = "windlass";

struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    jwk: Value,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn es256(kid: &str) -> SigningKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let point = pair.public_key_raw();
    SigningKey {
        kid: kid.into(),
        encoding: EncodingKey::from_ec_der(&pair.serialize_der()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
                    "x": b64(&point[1..33]), "y": b64(&point[33..65])}),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a good token for `org`, valid `secs` more seconds.
fn claims(org: &str, secs: u64) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": format!("alice@{org}"), "org_id": org,
           "scope": "openid responses:read responses:write", "exp": now() + secs,
           "iat": now()})
}

fn sign(key: &SigningKey, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    encode(&header, claims, &key.encoding).unwrap()
}

/// Serves `{"keys": [...]}` at `/jwks`; returns its URL.
async fn jwks_server(keys: &[&SigningKey]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let body = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
    let app = Router::new().route("/jwks", get(move || async move { Json(body) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A replica with `[auth.oidc]` on `jwks` and the static key `sk-static`.
async fn gateway(jwks: &str, upstream: &FakeUpstream, name: &str) -> Replica {
    let dir = std::env::temp_dir().join(format!("windlass-jwt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("windlass.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\napi_keys = [\"sk-static\"]\n\n[auth.oidc]\nissuer = {ISSUER:?}\n\
             jwks_url = {jwks:?}\naudience = {AUDIENCE:?}\ntenant_claim = \"org_id\"\n\
             leeway_secs = 0\nrefetch_interval_secs = 1\n"
        ),
    )
    .unwrap();
    let db = dir.join("w.db");
    Replica::start(
        db.to_str().unwrap(),
        &upstream.base_url(),
        &["--config", config.to_str().unwrap()],
    )
    .await
}

async fn post(gw: &Replica, token: &str, path: &str, body: &Value) -> (u16, Value) {
    let resp = gw
        .client
        .post(gw.url(path))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn get_as(gw: &Replica, token: &str, path: &str) -> (u16, Value) {
    let resp = gw
        .client
        .get(gw.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_keys_beside_static_keys_and_every_bad_token_is_one_401() {
    let key = es256("k1");
    let other = es256("k1"); // same kid, a key the issuer never published
    let stranger = es256("k9");
    let jwks = jwks_server(&[&key]).await;
    let upstream = FakeUpstream::start().await;
    let gw = gateway(&jwks, &upstream, "keys").await;
    let hi = json!({"model": "m", "input": "hi"});

    // A good token: its tenant owns what it creates.
    upstream.push(Reply::text("hello acme"));
    let acme = sign(&key, &claims("acme", 600));
    let (status, created) = post(&gw, &acme, "/v1/responses", &hi).await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, _) = get_as(&gw, &acme, &format!("/v1/responses/{id}")).await;
    assert_eq!(status, 200);
    // Another tenant's token, and the static key (default tenant): unknown.
    let globex = sign(&key, &claims("globex", 600));
    let (status, _) = get_as(&gw, &globex, &format!("/v1/responses/{id}")).await;
    assert_eq!(status, 404);
    let (status, _) = get_as(&gw, "sk-static", &format!("/v1/responses/{id}")).await;
    assert_eq!(status, 404);
    // The static key still works.
    upstream.push(Reply::text("hello default"));
    let (status, body) = post(&gw, "sk-static", "/v1/responses", &hi).await;
    assert_eq!(status, 200, "{body}");

    // Scopes come from the token: read-only cannot create.
    let mut read_only = claims("acme", 600);
    read_only["scope"] = json!("responses:read");
    let (status, body) = post(&gw, &sign(&key, &read_only), "/v1/responses", &hi).await;
    assert_eq!(status, 403, "{body}");

    // Every bad token: the same 401, saying nothing of why.
    let mut wrong_aud = claims("acme", 600);
    wrong_aud["aud"] = json!("someone-else");
    let mut wrong_iss = claims("acme", 600);
    wrong_iss["iss"] = json!("https://evil.example.test/");
    let mut expired = claims("acme", 600);
    expired["exp"] = json!(now() - 120);
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT","kid":"k1"}"#),
        b64(claims("acme", 600).to_string().as_bytes())
    );
    let bad = [
        ("bad signature", sign(&other, &claims("acme", 600))),
        ("wrong audience", sign(&key, &wrong_aud)),
        ("wrong issuer", sign(&key, &wrong_iss)),
        ("expired", sign(&key, &expired)),
        ("alg none", none),
        ("unknown kid", sign(&stranger, &claims("acme", 600))),
        ("not a key", "sk-unknown".to_owned()),
    ];
    let mut bodies = Vec::new();
    for (why, token) in &bad {
        let (status, body) = post(&gw, token, "/v1/responses", &hi).await;
        assert_eq!(status, 401, "{why}: {body}");
        assert_eq!(body["error"]["code"], "invalid_api_key", "{why}: {body}");
        bodies.push(body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "{bodies:?}");
    assert_eq!(upstream.request_count(), 2, "a bad token reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opened_with_a_jwt_ends_at_its_expiry() {
    let key = es256("k1");
    let jwks = jwks_server(&[&key]).await;
    let upstream = FakeUpstream::start().await;
    let gw = gateway(&jwks, &upstream, "sse").await;
    // The model streams a little, then stalls: only the expiry ends it.
    upstream.push(Reply::text("a long answer that never finishes").stall_after(2));
    let token = sign(&key, &claims("acme", 4));
    let mut resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .bearer_auth(&token)
        .json(&json!({"model": "m", "input": "go", "stream": true}))
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status().as_u16(), 200);
    let mut raw = String::new();
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(chunk)) = resp.chunk().await {
            raw.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived its token: {raw}");
    assert!(raw.contains("event: response.created"), "{raw}");
    let frames: Vec<&str> = raw
        .split("\n\n")
        .filter(|f| !f.trim().is_empty() && !f.starts_with(':'))
        .collect();
    let last = frames.last().copied().unwrap_or_default();
    assert!(last.starts_with("event: error\n"), "{raw}");
    assert!(last.contains("\"code\":\"token_expired\""), "{raw}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_opened_with_a_jwt_is_closed_at_its_expiry() {
    let key = es256("k1");
    let jwks = jwks_server(&[&key]).await;
    let upstream = FakeUpstream::start().await;
    let gw = gateway(&jwks, &upstream, "ws").await;
    upstream.push(Reply::text("a long answer that never finishes").stall_after(2));
    let token = sign(&key, &claims("acme", 4));
    let mut request = format!("{}/v1/responses", gw.base.replace("http://", "ws://"))
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade");
    let create = json!({"type": "response.create", "model": "m", "input": "go"});
    socket
        .send(Message::Text(create.to_string().into()))
        .await
        .unwrap();
    let mut messages = Vec::new();
    let mut close = None;
    let done = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(Ok(m)) = socket.next().await {
            match m {
                Message::Text(t) => messages.push(serde_json::from_str::<Value>(&t).unwrap()),
                Message::Close(frame) => {
                    close = frame;
                    break;
                }
                _ => {}
            }
        }
    })
    .await;
    assert!(done.is_ok(), "the socket outlived its token");
    let types: Vec<&str> = messages.iter().filter_map(|m| m["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"response.created"), "{types:?}");
    let error = messages.last().unwrap();
    assert_eq!(error["type"], "error", "{messages:?}");
    assert_eq!(error["error"]["code"], "token_expired", "{error}");
    let close = close.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason.as_str(), "token expired");
}

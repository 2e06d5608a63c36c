//! Bearer JWTs against a local JWKS server (axum on loopback) with tokens
//! signed in the test: ES256 and EdDSA keys made with rcgen, an RS256 key
//! with openssl. Every bad token is the same `Unauthorized`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use windlass_auth::{Audience, JwtVerifier, OidcConfig, Unauthorized};

/// A signing key and its public JWK.
struct TestKey {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    jwk: Value,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn es256(kid: &str) -> TestKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let point = pair.public_key_raw();
    TestKey {
        kid: kid.into(),
        alg: Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(&pair.serialize_der()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
                    "x": b64(&point[1..33]), "y": b64(&point[33..65])}),
    }
}

fn eddsa(kid: &str) -> TestKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    TestKey {
        kid: kid.into(),
        alg: Algorithm::EdDSA,
        encoding: EncodingKey::from_ed_der(&pair.serialize_der()),
        jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": kid,
                    "x": b64(pair.public_key_raw())}),
    }
}

/// An RSA key from openssl (rcgen on ring cannot make one).
fn rs256(kid: &str) -> TestKey {
    let dir = std::env::temp_dir().join(format!("windlass-auth-rsa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pem = dir.join("key.pem");
    let der = dir.join("key.der");
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["genrsa", "-out", pem.to_str().unwrap(), "2048"]);
    run(&[
        "rsa",
        "-in",
        pem.to_str().unwrap(),
        "-outform",
        "DER",
        "-traditional",
        "-out",
        der.to_str().unwrap(),
    ]);
    let modulus = run(&["rsa", "-in", pem.to_str().unwrap(), "-noout", "-modulus"]);
    let hex = modulus.trim().trim_start_matches("Modulus=");
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let key = TestKey {
        kid: kid.into(),
        alg: Algorithm::RS256,
        encoding: EncodingKey::from_rsa_der(&std::fs::read(&der).unwrap()),
        jwk: json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                    "n": b64(&n), "e": "AQAB"}),
    };
    let _ = std::fs::remove_dir_all(dir);
    key
}

/// The issuer: a JWKS route (counting fetches) and discovery.
#[derive(Clone)]
struct Issuer {
    jwks: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
    discoveries: Arc<AtomicUsize>,
    base: String,
}

impl Issuer {
    async fn start(keys: &[&TestKey]) -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let issuer = Issuer {
            jwks: Arc::new(Mutex::new(Value::Null)),
            fetches: Arc::new(AtomicUsize::new(0)),
            discoveries: Arc::new(AtomicUsize::new(0)),
            base,
        };
        issuer.publish(keys);
        let app = Router::new()
            .route(
                "/jwks",
                get(|State(i): State<Issuer>| async move {
                    i.fetches.fetch_add(1, Ordering::SeqCst);
                    let body = i.jwks.lock().unwrap().clone();
                    ([("cache-control", "public, max-age=3600")], Json(body))
                }),
            )
            .route(
                "/.well-known/openid-configuration",
                get(|State(i): State<Issuer>| async move {
                    i.discoveries.fetch_add(1, Ordering::SeqCst);
                    Json(json!({"issuer": i.base, "jwks_uri": format!("{}/jwks", i.base)}))
                }),
            )
            .with_state(issuer.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        issuer
    }

    fn publish(&self, keys: &[&TestKey]) {
        let list: Vec<Value> = keys.iter().map(|k| k.jwk.clone()).collect();
        *self.jwks.lock().unwrap() = json!({"keys": list});
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    fn config(&self) -> OidcConfig {
        let mut config = OidcConfig::new(self.base.clone(), "windlass");
        config.jwks_url = Some(format!("{}/jwks", self.base));
        config.tenant_claim = Some("org_id".into());
        config.refetch_interval_secs = 3600;
        config
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(issuer: &Issuer) -> Value {
    json!({"iss": issuer.base, "aud": "windlass", "sub": "ci-bot", "org_id": "acme",
           "scope": "responses.read responses.write", "exp": now() + 600, "iat": now()})
}

fn sign(key: &TestKey, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    encode(&header, claims, &key.encoding).unwrap()
}

#[tokio::test]
async fn good_tokens_map_claims_to_an_identity() {
    let (ec, ed, rsa) = (es256("ec-1"), eddsa("ed-1"), rs256("rsa-1"));
    let issuer = Issuer::start(&[&ec, &ed, &rsa]).await;
    let verifier = JwtVerifier::new(issuer.config()).unwrap();
    let exp = now() + 600;
    let mut c = claims(&issuer);
    c["exp"] = exp.into();

    let id = verifier.verify(&sign(&ec, &c)).await.expect("ES256");
    assert_eq!(id.key_name, "ci-bot");
    assert_eq!(id.tenant.as_deref(), Some("acme"));
    assert_eq!(id.scopes, ["responses.read", "responses.write"]);
    assert_eq!(id.expires_at, exp);
    assert!(id.expires_in().as_secs() > 0);

    // Scopes as an array; EdDSA and RS256 keys.
    c["scope"] = json!(["responses.read"]);
    for key in [&ed, &rsa] {
        let id = verifier.verify(&sign(key, &c)).await.expect("signed");
        assert_eq!(id.scopes, ["responses.read"], "{:?}", key.alg);
    }
    // The set was fetched once for all of them (max-age 3600).
    assert_eq!(issuer.fetches(), 1);
}

#[tokio::test]
async fn bad_tokens_are_one_unauthorized() {
    let ec = es256("ec-1");
    let issuer = Issuer::start(&[&ec]).await;
    let verifier = JwtVerifier::new(issuer.config()).unwrap();
    let good = claims(&issuer);
    assert!(verifier.verify(&sign(&ec, &good)).await.is_ok());

    // Signed by another key under the same kid.
    let impostor = TestKey {
        kid: "ec-1".into(),
        ..es256("ec-1")
    };
    let mut cases = vec![("bad signature", sign(&impostor, &good))];
    let mut wrong_aud = good.clone();
    wrong_aud["aud"] = "someone-else".into();
    cases.push(("wrong audience", sign(&ec, &wrong_aud)));
    let mut wrong_iss = good.clone();
    wrong_iss["iss"] = "https://evil.example".into();
    cases.push(("wrong issuer", sign(&ec, &wrong_iss)));
    let mut expired = good.clone();
    expired["exp"] = (now() - 3600).into();
    cases.push(("expired", sign(&ec, &expired)));
    let mut early = good.clone();
    early["nbf"] = (now() + 3600).into();
    cases.push(("not yet valid", sign(&ec, &early)));
    let mut no_exp = good.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    cases.push(("no exp", sign(&ec, &no_exp)));
    let mut no_tenant = good.clone();
    no_tenant.as_object_mut().unwrap().remove("org_id");
    cases.push(("no tenant claim", sign(&ec, &no_tenant)));
    // alg none: a header and claims with an empty signature.
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(good.to_string().as_bytes())
    );
    cases.push(("alg none", none));
    // HS256 with the public key's bytes as the secret (key confusion).
    let public = ec.jwk.to_string();
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some("ec-1".into());
    let confused = encode(&hs, &good, &EncodingKey::from_secret(public.as_bytes())).unwrap();
    cases.push(("hmac with a public key", confused));
    cases.push(("not a jwt", "sk-static-key".into()));

    for (what, token) in cases {
        assert_eq!(verifier.verify(&token).await, Err(Unauthorized), "{what}");
        assert_eq!(Unauthorized.to_string(), "invalid bearer token");
    }
}

#[tokio::test]
async fn an_unknown_kid_refetches_once_per_interval_then_is_refused() {
    let ec = es256("ec-1");
    let issuer = Issuer::start(&[&ec]).await;
    let verifier = JwtVerifier::new(issuer.config()).unwrap();
    assert!(verifier.verify(&sign(&ec, &claims(&issuer))).await.is_ok());
    assert_eq!(issuer.fetches(), 1);

    let stranger = es256("unknown-kid");
    let token = sign(&stranger, &claims(&issuer));
    assert_eq!(verifier.verify(&token).await, Err(Unauthorized));
    assert_eq!(issuer.fetches(), 2, "one refetch for the unknown kid");
    // Within the interval: refused without asking the issuer again.
    assert_eq!(verifier.verify(&token).await, Err(Unauthorized));
    let other = sign(&es256("another-kid"), &claims(&issuer));
    assert_eq!(verifier.verify(&other).await, Err(Unauthorized));
    assert_eq!(issuer.fetches(), 2);
    // Known keys keep working.
    assert!(verifier.verify(&sign(&ec, &claims(&issuer))).await.is_ok());
}

#[tokio::test]
async fn a_rotated_key_is_accepted_after_a_refetch() {
    let old = es256("2025-key");
    let issuer = Issuer::start(&[&old]).await;
    let mut config = issuer.config();
    config.refetch_interval_secs = 0;
    let verifier = JwtVerifier::new(config).unwrap();
    assert!(verifier.verify(&sign(&old, &claims(&issuer))).await.is_ok());

    let new = eddsa("2026-key");
    issuer.publish(&[&old, &new]);
    let id = verifier
        .verify(&sign(&new, &claims(&issuer)))
        .await
        .expect("the new kid after a refetch");
    assert_eq!(id.key_name, "ci-bot");
    assert_eq!(issuer.fetches(), 2);
    // The old key is retired: once the issuer drops it and the set is
    // refetched (here: for an unknown kid), its tokens are refused.
    issuer.publish(&[&new]);
    let _ = verifier.verify(&sign(&es256("x"), &claims(&issuer))).await;
    assert_eq!(
        verifier.verify(&sign(&old, &claims(&issuer))).await,
        Err(Unauthorized)
    );
}

#[tokio::test]
async fn discovery_finds_the_key_set() {
    let ec = es256("ec-1");
    let issuer = Issuer::start(&[&ec]).await;
    let mut config = issuer.config();
    config.jwks_url = None;
    config.tenant_claim = None;
    let verifier = JwtVerifier::new(config).unwrap();
    let id = verifier
        .verify(&sign(&ec, &claims(&issuer)))
        .await
        .expect("through discovery");
    assert_eq!(id.tenant, None, "no tenant claim configured: the default");
    assert_eq!(issuer.discoveries.load(Ordering::SeqCst), 1);
    assert_eq!(issuer.fetches(), 1);
}

#[test]
fn config_reads_from_toml() {
    let c: OidcConfig = toml::from_str(
        r#"
        issuer = "https://login.example.com/"
        audience = ["windlass", "api"]
        tenant_claim = "org_id"
        scopes_claim = "scp"
        jwks_ttl_secs = 600
        "#,
    )
    .unwrap();
    assert_eq!(
        c.audience,
        Audience::Many(vec!["windlass".into(), "api".into()])
    );
    assert_eq!(c.key_name_claim, "sub");
    assert_eq!(c.refetch_interval_secs, 30);
    assert!(toml::from_str::<OidcConfig>("issuer = \"x\"\naudince = \"y\"").is_err());
    let schema = schemars::schema_for!(OidcConfig);
    assert!(schema.as_value()["properties"]["tenant_claim"].is_object());
}

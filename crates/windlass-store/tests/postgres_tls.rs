//! Postgres over TLS against a real server with `ssl = on`:
//! `WINDLASS_PG_TLS=1 ./scripts/postgres.sh cargo test -p windlass-store
//! --features postgres --test postgres_tls`. The script's test CA signs a
//! server certificate for `localhost` only, and a client certificate for
//! the role `windlass_cert` (which may log in only with it). Skipped when
//! `WINDLASS_TEST_PG_TLS` is unset.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
#![cfg(feature = "postgres")]

mod common;

use std::path::PathBuf;

use common::{pg_schema_url, Turn, T};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use windlass_engine::{NewResponse, ResponseStore};
use windlass_store::{PgSslMode, PgStore};

struct Tls {
    /// A fresh schema on the cluster, as `windlass@127.0.0.1`.
    url: String,
    dir: PathBuf,
}

async fn tls_cluster() -> Option<Tls> {
    let Ok(dir) = std::env::var("WINDLASS_TEST_PG_TLS") else {
        eprintln!(
            "WINDLASS_TEST_PG_TLS is not set: skipping (WINDLASS_PG_TLS=1 scripts/postgres.sh)"
        );
        return None;
    };
    let url = pg_schema_url().await?;
    Some(Tls {
        url,
        dir: PathBuf::from(dir),
    })
}

impl Tls {
    fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The schema URL with another host and user, and TLS parameters.
    fn url_with(&self, user: &str, host: &str, params: &str) -> String {
        self.url
            .replacen("windlass@127.0.0.1", &format!("{user}@{host}"), 1)
            + "&"
            + params
    }

    fn verify_full(&self, host: &str) -> String {
        self.url_with(
            "windlass",
            host,
            &format!("sslmode=verify-full&sslrootcert={}", self.file("ca.crt")),
        )
    }
}

/// Whether the connections named `app` use TLS (asked over a plain
/// connection of the test's own).
async fn uses_tls(base: &str, app: &str) -> Vec<bool> {
    let (client, conn) = tokio_postgres::connect(base, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
        .query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = $1",
            &[&app],
        )
        .await
        .expect("pg_stat_ssl")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

async fn open_and_use(url: &str, app: &str) -> PgStore {
    let store = PgStore::open(&format!("{url}&application_name={app}"))
        .await
        .unwrap_or_else(|e| panic!("open: {e}"));
    Turn::new(&format!("r_{app}"), None, 1, 1)
        .save(&store)
        .await;
    assert!(store.get(T, &format!("r_{app}")).await.unwrap().is_some());
    store
}

#[tokio::test]
async fn require_encrypts_without_verifying() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    // By IP, which the certificate does not name: require does not look.
    let url = tls.url_with("windlass", "127.0.0.1", "sslmode=require");
    let store = open_and_use(&url, "tls_require").await;
    assert_eq!(store.tls_summary().mode, PgSslMode::Require);
    let seen = uses_tls(&tls.url, "tls_require").await;
    assert!(!seen.is_empty() && seen.iter().all(|s| *s), "{seen:?}");
    // And plain stays plain.
    let plain = tls.url_with("windlass", "127.0.0.1", "sslmode=disable");
    let _plain_store = open_and_use(&plain, "tls_disable").await;
    let seen = uses_tls(&tls.url, "tls_disable").await;
    assert!(!seen.is_empty() && seen.iter().all(|s| !*s), "{seen:?}");
}

#[tokio::test]
async fn verify_full_with_the_right_ca_and_host() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    let _store = open_and_use(&tls.verify_full("localhost"), "tls_full").await;
    let seen = uses_tls(&tls.url, "tls_full").await;
    assert!(!seen.is_empty() && seen.iter().all(|s| *s), "{seen:?}");
}

#[tokio::test]
async fn a_wrong_host_name_is_refused_by_verify_full_only() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    let err = PgStore::open(&tls.verify_full("127.0.0.1"))
        .await
        .expect_err("127.0.0.1 is not in the certificate");
    let text = err.to_string();
    assert!(
        text.contains("not valid for the host name '127.0.0.1'"),
        "{text}"
    );
    // verify-ca checks the chain only: the same host is fine.
    let ca_only = tls.url_with(
        "windlass",
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={}", tls.file("ca.crt")),
    );
    open_and_use(&ca_only, "tls_verify_ca").await;
}

#[tokio::test]
async fn a_wrong_ca_is_refused_with_a_clear_message_and_no_secret() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let other = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    let other_ca = std::env::temp_dir().join(format!("other-ca-{}.pem", std::process::id()));
    std::fs::write(&other_ca, other.pem()).unwrap();

    let url = tls
        .url_with(
            "windlass:s3cret-pass",
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", other_ca.display()),
        )
        .to_owned();
    let err = PgStore::open(&url).await.expect_err("another CA");
    let text = err.to_string();
    assert!(
        text.contains("not signed by the CA in sslrootcert"),
        "{text}"
    );
    assert!(text.contains(&other_ca.display().to_string()), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
    // Same with verify-ca, and with require plus a root file (libpq's rule).
    for mode in ["verify-ca", "require"] {
        let url = tls.url_with(
            "windlass",
            "localhost",
            &format!("sslmode={mode}&sslrootcert={}", other_ca.display()),
        );
        let text = PgStore::open(&url).await.expect_err(mode).to_string();
        assert!(text.contains("not signed by"), "{mode}: {text}");
    }
    let _ = std::fs::remove_file(other_ca);
}

#[tokio::test]
async fn a_client_certificate_is_accepted_where_the_server_demands_one() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    let with_cert = tls.url_with(
        "windlass_cert",
        "localhost",
        &format!(
            "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
            tls.file("ca.crt"),
            tls.file("client.crt"),
            tls.file("client.key")
        ),
    );
    open_and_use(&with_cert, "tls_client_cert").await;
    // The same role without the certificate is turned away by the server.
    let without = tls.url_with(
        "windlass_cert",
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", tls.file("ca.crt")),
    );
    let err = PgStore::open(&without).await.expect_err("no certificate");
    assert!(err.to_string().contains("postgres"), "{err}");
    // A key file that is not a key is a start-up error naming the file.
    let bad_key = tls.url_with(
        "windlass_cert",
        "localhost",
        &format!(
            "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
            tls.file("ca.crt"),
            tls.file("client.crt"),
            tls.file("ca.crt")
        ),
    );
    let text = PgStore::open(&bad_key)
        .await
        .expect_err("bad key")
        .to_string();
    assert!(text.contains("sslkey") && text.contains("ca.crt"), "{text}");
}

/// Every TLS connection of the pool is cut by the server
/// (`pg_terminate_backend`): what was acknowledged stays, and the pool
/// replaces the dead connections.
#[tokio::test]
async fn the_pool_recovers_when_tls_connections_are_cut() {
    let Some(tls) = tls_cluster().await else {
        return;
    };
    let url = tls.verify_full("localhost") + "&application_name=tls_cut";
    let store = PgStore::open(&url).await.expect("open");
    let mut acknowledged = Vec::new();
    for k in 0..4 {
        let turn = Turn::new(&format!("cut_before_{k}"), None, 1, 1);
        turn.save(&store).await;
        acknowledged.push(turn.id().to_owned());
    }

    let (client, conn) = tokio_postgres::connect(&tls.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let cut: i64 = client
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'tls_cut') t",
            &[],
        )
        .await
        .expect("terminate")
        .get(0);
    assert!(cut >= 1, "the pool's connection was cut");

    // Each save either fails (not acknowledged) or is stored; the pool holds
    // at most 16 connections, so it is whole again within that many tries.
    let mut failures = 0;
    let mut recovered = false;
    for k in 0..40 {
        let turn = Turn::new(&format!("cut_after_{k}"), None, 1, 1);
        let saved = store
            .save(NewResponse {
                tenant: T,
                response: &turn.resource,
                input: &turn.input,
                trace: None,
            })
            .await;
        match saved {
            Ok(()) => {
                acknowledged.push(turn.id().to_owned());
                if acknowledged.len() >= 8 {
                    recovered = true;
                    break;
                }
            }
            Err(_) => failures += 1,
        }
    }
    assert!(recovered, "the pool did not recover ({failures} failures)");
    assert!(failures <= 16, "{failures} failures");
    for id in &acknowledged {
        assert!(store.get(T, id).await.expect("get").is_some(), "{id} lost");
    }
    // The new connections use TLS too.
    let seen = uses_tls(&tls.url, "tls_cut").await;
    assert!(!seen.is_empty() && seen.iter().all(|s| *s), "{seen:?}");
}

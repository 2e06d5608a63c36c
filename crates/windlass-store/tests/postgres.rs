//! Postgres specifics beyond the shared contracts (tests/semantics.rs,
//! runs.rs, tenancy.rs): replicas migrating at once, several stores
//! (replicas) on one database seeing each other's writes, and quotas
//! shared by replicas. Skipped when `WINDLASS_TEST_PG` is
//! unset; `scripts/postgres.sh` sets it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
#![cfg(feature = "postgres")]

mod common;

use common::{pg_schema_url, transcript, Turn};
use std::time::Duration;

use windlass_engine::{
    QuotaCounter, QuotaKind, QuotaLimits, QuotaSubject, QuotaVerdict, ResponseStore, DEFAULT_TENANT,
};
use windlass_store::PgStore;

/// Eight replicas start at once on an empty database: every one opens, and
/// each migration is applied exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_starts_migrate_once() {
    let Some(url) = pg_schema_url().await else {
        return;
    };
    let opens = (0..8).map(|_| {
        let url = url.clone();
        tokio::spawn(async move { PgStore::open(&url).await })
    });
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.expect("task").expect("open"));
    }

    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    let rows = client
        .query(
            "SELECT version, COUNT(*) FROM windlass_migrations GROUP BY version",
            &[],
        )
        .await
        .expect("migrations");
    assert_eq!(rows.len(), 12, "every known migration applied");
    for row in rows {
        let count: i64 = row.get(1);
        assert_eq!(count, 1);
    }
    // And the stores work.
    Turn::new("a", None, 1, 1).save(&stores[3]).await;
    assert!(stores[5]
        .get(DEFAULT_TENANT, "a")
        .await
        .expect("get")
        .is_some());
}

/// A chain written turn by turn through two stores (two replicas'
/// pools) loads whole through either; a delete through one is seen by the
/// other.
#[tokio::test]
async fn replicas_share_chains() {
    let Some(url) = pg_schema_url().await else {
        return;
    };
    let a = PgStore::open(&url).await.expect("open a");
    let b = PgStore::open(&url).await.expect("open b");
    let t1 = Turn::new("t1", None, 1, 1);
    let t2 = Turn::new("t2", Some("t1"), 1, 2);
    let t3 = Turn::new("t3", Some("t2"), 1, 1);
    t1.save(&a).await;
    t2.save(&b).await;
    t3.save(&a).await;
    let full = transcript(&[&t1, &t2, &t3]);
    assert_eq!(
        b.load_context(DEFAULT_TENANT, "t3").await.expect("load"),
        Some(full.clone())
    );

    assert!(b.delete(DEFAULT_TENANT, "t2").await.expect("delete"));
    assert_eq!(a.get(DEFAULT_TENANT, "t2").await.expect("get"), None);
    assert_eq!(
        a.load_context(DEFAULT_TENANT, "t3").await.expect("load"),
        Some(full)
    );
}

/// TLS settings that cannot be honoured are refused at open, before any
/// connection: a verifying mode without a CA, an unknown mode, a CA file
/// that is not there (tests/postgres_tls.rs has the real-server cases).
#[tokio::test]
async fn unusable_tls_settings_are_refused_at_open() {
    for (url, expected) in [
        (
            "postgres://u@127.0.0.1:1/db?sslmode=verify-full",
            "sslrootcert",
        ),
        ("postgres://u@127.0.0.1:1/db?sslmode=sometimes", "sometimes"),
        (
            "postgres://u@127.0.0.1:1/db?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
            "/nonexistent/ca.pem",
        ),
        ("postgres://u@127.0.0.1:1/db?sslpassword=x", "sslpassword"),
    ] {
        let err = PgStore::open(url).await.expect_err(url);
        assert!(err.to_string().contains(expected), "{url}: {err}");
    }
}

fn limits(rpm: Option<u64>, tpm: Option<u64>) -> QuotaLimits {
    QuotaLimits {
        requests_per_minute: rpm,
        tokens_per_minute: tpm,
    }
}

/// Two replicas (two stores, two pools) spend one budget: three requests a
/// minute in all, whichever replica admits them; a refusal takes nothing
/// from the other subjects; token debt charged on one refuses on the other.
#[tokio::test]
async fn replicas_share_quotas() {
    let Some(url) = pg_schema_url().await else {
        return;
    };
    let a = PgStore::open(&url).await.expect("open a").quota();
    let b = PgStore::open(&url).await.expect("open b").quota();
    let tenant = (QuotaSubject::tenant("acme"), limits(Some(3), None));
    let key = (QuotaSubject::key("alice"), limits(Some(2), None));

    for counter in [&a, &b, &a] {
        let verdict = counter
            .admit(std::slice::from_ref(&tenant))
            .await
            .expect("admit");
        assert_eq!(verdict, QuotaVerdict::Allowed);
    }
    let refused = b
        .admit(&[key.clone(), tenant.clone()])
        .await
        .expect("admit");
    match refused {
        QuotaVerdict::Refused {
            subject,
            kind,
            limit,
            retry_after,
        } => {
            assert_eq!(subject, tenant.0);
            assert_eq!(kind, QuotaKind::Requests);
            assert_eq!(limit, 3);
            assert!(retry_after >= Duration::from_secs(1));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // All or nothing: the key's bucket was not touched by the refusal, so it
    // still holds its 2 requests (it refills one every 30 s).
    for _ in 0..2 {
        assert_eq!(
            a.admit(std::slice::from_ref(&key)).await.expect("admit"),
            QuotaVerdict::Allowed
        );
    }
    assert!(matches!(
        a.admit(std::slice::from_ref(&key)).await.expect("admit"),
        QuotaVerdict::Refused { .. }
    ));

    // Token debt: charged on A, refused on B.
    let tokens = (QuotaSubject::tenant("globex"), limits(None, Some(100)));
    assert_eq!(
        b.admit(std::slice::from_ref(&tokens)).await.expect("admit"),
        QuotaVerdict::Allowed
    );
    a.charge(std::slice::from_ref(&tokens), 250)
        .await
        .expect("charge");
    match b.admit(std::slice::from_ref(&tokens)).await.expect("admit") {
        QuotaVerdict::Refused { kind, .. } => assert_eq!(kind, QuotaKind::Tokens),
        other => panic!("expected a token refusal, got {other:?}"),
    }
}

/// Retention: responses created before the cut go, newest first, and a
/// newer response continuing from them keeps its whole history.
#[tokio::test]
async fn prune_keeps_survivors_whole() {
    let Some(url) = pg_schema_url().await else {
        return;
    };
    let store = PgStore::open(&url).await.expect("open");
    let mut t1 = Turn::new("p1", None, 1, 1);
    let mut t2 = Turn::new("p2", Some("p1"), 1, 1);
    let mut t3 = Turn::new("p3", Some("p2"), 1, 1);
    for (t, at) in [(&mut t1, 100), (&mut t2, 200), (&mut t3, 300)] {
        t.resource.created_at = at;
        t.save(&store).await;
    }
    assert_eq!(store.prune_before(250).await.expect("prune"), 2);
    assert_eq!(store.get(DEFAULT_TENANT, "p1").await.expect("get"), None);
    assert_eq!(store.get(DEFAULT_TENANT, "p2").await.expect("get"), None);
    assert_eq!(
        store
            .load_context(DEFAULT_TENANT, "p3")
            .await
            .expect("load"),
        Some(transcript(&[&t1, &t2, &t3]))
    );
    assert_eq!(store.prune_before(250).await.expect("prune"), 0);
}

/// Sixteen saves continuing one response at once, and a delete of that
/// response among them: every save lands, and each successor's context is
/// either whole (the delete waited for it and handed it the history) or
/// its own turn only (the delete went first). Never a successor pointing
/// at the deleted row.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn saves_continuing_one_response_race_its_delete() {
    let Some(url) = pg_schema_url().await else {
        return;
    };
    let store = std::sync::Arc::new(PgStore::open(&url).await.expect("open"));
    let a = Turn::new("ra", None, 1, 1);
    let b = Turn::new("rb", Some("ra"), 1, 1);
    a.save(&*store).await;
    b.save(&*store).await;
    let turns: Vec<Turn> = (0..16)
        .map(|i| Turn::new(&format!("rc{i}"), Some("rb"), 1, 1))
        .collect();
    let saves = turns.iter().map(|t| t.save(&*store));
    let delete = async { store.delete(DEFAULT_TENANT, "rb").await.expect("delete") };
    let (_, deleted) = tokio::join!(futures::future::join_all(saves), delete);
    assert!(deleted);
    for t in &turns {
        let context = store
            .load_context(DEFAULT_TENANT, &t.resource.id)
            .await
            .expect("load")
            .expect("saved");
        assert!(
            context == transcript(&[&a, &b, t]) || context == transcript(&[t]),
            "{}: {} items",
            t.resource.id,
            context.len()
        );
    }
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    let dangling: i64 = client
        .query_one(
            "SELECT COUNT(*) FROM responses r WHERE r.history_parent IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM responses p WHERE p.id = r.history_parent)",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(dangling, 0);
}

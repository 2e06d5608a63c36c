//! Vector store `description` and expiry on SQLite and Postgres (feature
//! `postgres`, when `WINDLASS_TEST_PG` is set): the sweep marks stores whose
//! `expires_after` has passed, across tenants, cancels what is still being
//! ingested and deletes their chunks; two sweeps at once (two replicas)
//! expire each store once. The clock is the `now` the sweep is given, so a
//! one-day policy expires without waiting a day.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use common::TempDb;
use windlass_engine::{
    Attached, ChunkQuery, FileStore, IngestionOutcome, ListRequest, NewAttachment, NewChunk,
    NewVectorStore, Searched, SortOrder, VectorStoreStore, VectorStoreUpdate,
};
use windlass_protocol::*;
use windlass_store::SqliteStore;

const T: &str = "tenant-a";
const OTHER: &str = "tenant-b";
const DAY: u64 = 86_400;
/// When every store below is created (and last used): the real clock, as
/// reads derive `expired` from it for stores the sweep has not marked yet.
static CREATED: LazyLock<u64> = LazyLock::new(|| {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
});

trait Retrieval: FileStore + VectorStoreStore {}
impl<S: FileStore + VectorStoreStore> Retrieval for S {}

/// Two handles on one database per backend: the second stands for another
/// replica (another process on the SQLite file, another pool on Postgres).
struct Backend {
    name: &'static str,
    store: Arc<dyn Retrieval>,
    replica: Arc<dyn Retrieval>,
    _db: Option<TempDb>,
}

async fn backends() -> Vec<Backend> {
    let db = TempDb::new();
    let one = SqliteStore::open(&db.path).await.expect("open sqlite");
    let two = SqliteStore::open(&db.path)
        .await
        .expect("open sqlite again");
    #[allow(unused_mut)]
    let mut out = vec![Backend {
        name: "sqlite",
        store: Arc::new(one),
        replica: Arc::new(two),
        _db: Some(db),
    }];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let one = windlass_store::PgStore::open(&url).await.expect("open pg");
        let two = windlass_store::PgStore::open(&url).await.expect("open pg");
        out.push(Backend {
            name: "postgres",
            store: Arc::new(one),
            replica: Arc::new(two),
            _db: None,
        });
    }
    out
}

async fn store(s: &dyn Retrieval, tenant: &str, id: &str, days: Option<u32>) -> VectorStore {
    s.create_vector_store(
        tenant,
        &NewVectorStore {
            id: id.to_owned(),
            name: id.to_owned(),
            description: Some(format!("about {id}")),
            created_at: *CREATED,
            metadata: Default::default(),
            expires_after: days.map(|days| ExpiresAfter {
                anchor: ExpiresAnchor::LastActiveAt,
                days,
            }),
            embedding_model: None,
        },
    )
    .await
    .expect("create store")
}

async fn attach(s: &dyn Retrieval, tenant: &str, store: &str, file: &str, now: u64) -> bool {
    let mut f = FileObject::new(
        file.to_owned(),
        format!("{file}.txt"),
        5,
        FilePurpose::Assistants,
        1,
    );
    f.bytes = 5;
    if s.get_file(tenant, file).await.unwrap().is_none() {
        s.create_file(tenant, &f, b"hello").await.unwrap();
    }
    let one = NewAttachment {
        file_id: file.to_owned(),
        attributes: None,
        chunking: StaticChunking::AUTO,
    };
    match s
        .attach_files(tenant, store, &[one], None, now)
        .await
        .unwrap()
    {
        Attached::Done(_) => true,
        Attached::Expired => false,
        other => panic!("attach: {other:?}"),
    }
}

/// Claims every pending file and completes it with one chunk.
async fn ingest_pending(s: &dyn Retrieval) {
    for job in s.claim_ingestions("w", *CREATED, 600, 100).await.unwrap() {
        let outcome = IngestionOutcome::Completed {
            chunks: vec![NewChunk {
                text: format!("kayak rudder repair notes for {}", job.file_id),
                tokens: 6,
                embedding: None,
            }],
            usage_bytes: 40,
        };
        assert!(s.finish_ingestion(&job, &outcome).await.unwrap());
    }
}

fn query(store: &str) -> ChunkQuery {
    query_at(&[store], *CREATED)
}

/// A search of `stores` with expiry judged at `now`.
fn query_at(stores: &[&str], now: u64) -> ChunkQuery {
    ChunkQuery {
        vector_store_ids: stores.iter().map(|s| s.to_string()).collect(),
        text: "kayak rudder".into(),
        embedding: None,
        filter: None,
        limit: 10,
        score_threshold: None,
        weights: None,
        now,
    }
}

/// A swept store: refused by search, its file's chunks gone.
async fn assert_swept(s: &dyn Retrieval, tenant: &str, store: &str, file: &str, name: &str) {
    assert_eq!(
        s.search(tenant, &query(store)).await.unwrap(),
        Searched::Expired(store.to_owned()),
        "{name}"
    );
    let chunks = s.file_chunks(tenant, store, file).await.unwrap();
    assert_eq!(chunks, Some(vec![]), "{name}: {store}'s chunks deleted");
}

async fn hits(s: &dyn Retrieval, tenant: &str, store: &str) -> usize {
    s.search(tenant, &query(store))
        .await
        .unwrap()
        .found()
        .expect("store known")
        .hits
        .len()
}

#[tokio::test]
async fn description_is_stored_returned_and_modified() {
    for b in backends().await {
        let s = b.store.as_ref();
        let created = store(s, T, "vs_d", None).await;
        assert_eq!(created.description.as_deref(), Some("about vs_d"));
        let got = s.get_vector_store(T, "vs_d").await.unwrap().unwrap();
        assert_eq!(got.description.as_deref(), Some("about vs_d"), "{}", b.name);
        let update = VectorStoreUpdate {
            description: Some("new words".into()),
            ..Default::default()
        };
        let up = s.update_vector_store(T, "vs_d", &update).await.unwrap();
        assert_eq!(up.unwrap().description.as_deref(), Some("new words"));
        // A modify without it keeps it.
        let rename = VectorStoreUpdate {
            name: Some("renamed".into()),
            ..Default::default()
        };
        let up = s.update_vector_store(T, "vs_d", &rename).await.unwrap();
        assert_eq!(up.unwrap().description.as_deref(), Some("new words"));
        let listed = s
            .list_vector_stores(T, &ListRequest::first(10, SortOrder::Asc))
            .await
            .unwrap();
        assert_eq!(listed.data[0].description.as_deref(), Some("new words"));
    }
}

#[tokio::test]
async fn the_sweep_expires_stores_across_tenants_and_deletes_their_chunks() {
    for b in backends().await {
        let (s, name) = (b.store.as_ref(), b.name);
        store(s, T, "vs_short", Some(1)).await;
        store(s, T, "vs_forever", None).await;
        store(s, OTHER, "vs_other", Some(1)).await;
        store(s, T, "vs_used", Some(1)).await;
        for (tenant, vs, file) in [
            (T, "vs_short", "file-a"),
            (T, "vs_forever", "file-b"),
            (OTHER, "vs_other", "file-c"),
            (T, "vs_used", "file-d"),
        ] {
            assert!(attach(s, tenant, vs, file, *CREATED).await);
        }
        ingest_pending(s).await;
        // A file still being ingested when the store expires.
        assert!(attach(s, T, "vs_short", "file-e", *CREATED).await);
        let late = s.claim_ingestions("w", *CREATED, 600, 10).await.unwrap();
        assert_eq!(late.len(), 1, "{name}");
        // vs_used is used half a day in: its day runs from then.
        s.touch_vector_stores(T, &["vs_used".into()], *CREATED + DAY / 2)
            .await
            .unwrap();

        assert!(
            s.expire_vector_stores(*CREATED + DAY - 1)
                .await
                .unwrap()
                .is_empty(),
            "{name}: nothing is due a second early"
        );
        let mut due: Vec<_> = s
            .expire_vector_stores(*CREATED + DAY)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.tenant, e.id))
            .collect();
        due.sort();
        assert_eq!(
            due,
            vec![
                (T.to_owned(), "vs_short".to_owned()),
                (OTHER.to_owned(), "vs_other".to_owned())
            ],
            "{name}"
        );

        let gone = s.get_vector_store(T, "vs_short").await.unwrap().unwrap();
        assert_eq!(gone.status, VectorStoreStatus::Expired, "{name}");
        assert_eq!(gone.description.as_deref(), Some("about vs_short"));
        assert_eq!(gone.usage_bytes, 0, "{name}");
        assert_eq!(
            (gone.file_counts.completed, gone.file_counts.cancelled),
            (1, 1),
            "{name}: the file being ingested was cancelled"
        );
        assert_eq!(
            s.file_chunks(T, "vs_short", "file-a").await.unwrap(),
            Some(vec![]),
            "{name}: chunks deleted, the attachment listed"
        );
        assert_swept(s, T, "vs_short", "file-a", name).await;
        assert_swept(s, OTHER, "vs_other", "file-c", name).await;
        // The ingestion that was running writes nothing.
        let outcome = IngestionOutcome::Completed {
            chunks: vec![NewChunk {
                text: "kayak rudder late".into(),
                tokens: 3,
                embedding: None,
            }],
            usage_bytes: 17,
        };
        assert!(!s.finish_ingestion(&late[0], &outcome).await.unwrap());
        assert_swept(s, T, "vs_short", "file-a", name).await;

        // The others are untouched.
        assert_eq!(hits(s, T, "vs_forever").await, 1, "{name}");
        assert_eq!(hits(s, T, "vs_used").await, 1, "{name}");
        let used = s.get_vector_store(T, "vs_used").await.unwrap().unwrap();
        assert_eq!(used.status, VectorStoreStatus::Completed, "{name}");

        // Expired for good: use does not move it, a new policy does not
        // revive it, no file can be attached, a second sweep finds nothing.
        s.touch_vector_stores(T, &["vs_short".into()], *CREATED + 2 * DAY)
            .await
            .unwrap();
        let cleared = VectorStoreUpdate {
            expires_after: Some(None),
            ..Default::default()
        };
        let after = s
            .update_vector_store(T, "vs_short", &cleared)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after.status, VectorStoreStatus::Expired, "{name}");
        assert_eq!(after.last_active_at, Some(*CREATED), "{name}");
        assert!(!attach(s, T, "vs_short", "file-f", *CREATED + 2 * DAY).await);
        assert!(s
            .expire_vector_stores(*CREATED + 10 * DAY)
            .await
            .unwrap()
            .iter()
            .all(|e| e.id == "vs_used"));
        // Deleting it still works.
        assert!(s.delete_vector_store(T, "vs_short").await.unwrap());
    }
}

#[tokio::test]
async fn a_store_past_its_policy_takes_no_file_before_the_sweep() {
    for b in backends().await {
        let s = b.store.as_ref();
        store(s, T, "vs_late", Some(1)).await;
        assert!(!attach(s, T, "vs_late", "file-x", *CREATED + DAY).await);
        assert!(attach(s, T, "vs_late", "file-x", *CREATED + DAY - 1).await);
    }
}

#[tokio::test]
async fn a_store_past_its_policy_is_not_searched_before_the_sweep() {
    for b in backends().await {
        let (s, name) = (b.store.as_ref(), b.name);
        store(s, T, "vs_due", Some(1)).await;
        store(s, T, "vs_keep", None).await;
        assert!(attach(s, T, "vs_due", "file-a", *CREATED).await);
        assert!(attach(s, T, "vs_keep", "file-b", *CREATED).await);
        ingest_pending(s).await;
        let search = |stores: &'static [&'static str], tenant, now| async move {
            s.search(tenant, &query_at(stores, now)).await.unwrap()
        };
        let last = *CREATED + DAY - 1;
        let hits = |found: Searched| found.found().expect("searched").hits.len();
        assert_eq!(hits(search(&["vs_due"], T, last).await), 1, "{name}");
        // From the second its day ends, no sweep needed.
        let due = *CREATED + DAY;
        let expired = Searched::Expired("vs_due".into());
        assert_eq!(search(&["vs_due"], T, due).await, expired, "{name}");
        // With a live store beside it, neither is searched.
        assert_eq!(
            search(&["vs_keep", "vs_due"], T, due).await,
            expired,
            "{name}"
        );
        assert_eq!(hits(search(&["vs_keep"], T, due).await), 1, "{name}");
        // Another tenant's expired store is unknown, not expired.
        assert_eq!(
            search(&["vs_due"], OTHER, due).await,
            Searched::UnknownStore,
            "{name}"
        );
        // Nothing was swept: the refusal is the search's own judgement.
        let chunks = s.file_chunks(T, "vs_due", "file-a").await.unwrap();
        assert_eq!(chunks.map(|c| c.len()), Some(1), "{name}");
    }
}

#[tokio::test]
async fn two_replicas_sweeping_at_once_expire_each_store_once() {
    for b in backends().await {
        let name = b.name;
        let ids: Vec<String> = (0..12).map(|i| format!("vs_{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            let tenant = if i % 2 == 0 { T } else { OTHER };
            store(b.store.as_ref(), tenant, id, Some(1)).await;
            assert!(attach(b.store.as_ref(), tenant, id, &format!("file-{i}"), *CREATED).await);
        }
        ingest_pending(b.store.as_ref()).await;
        let now = *CREATED + DAY;
        let (one, two) = tokio::join!(
            b.store.expire_vector_stores(now),
            b.replica.expire_vector_stores(now)
        );
        let (one, two) = (one.unwrap(), two.unwrap());
        let seen: BTreeSet<String> = one.iter().chain(&two).map(|e| e.id.clone()).collect();
        assert_eq!(
            one.len() + two.len(),
            ids.len(),
            "{name}: each store expired exactly once"
        );
        assert_eq!(seen, ids.iter().cloned().collect(), "{name}");
        for (i, id) in ids.iter().enumerate() {
            let tenant = if i % 2 == 0 { T } else { OTHER };
            let file = format!("file-{i}");
            assert_swept(b.replica.as_ref(), tenant, id, &file, name).await;
        }
    }
}

//! The `FileStore` and `VectorStoreStore` contracts on SQLite and Postgres
//! (feature `postgres`, when `WINDLASS_TEST_PG` is set; pgvector is used
//! when the server has it): one set of tests, and search answers compared
//! across the backends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::TempDb;
use serde_json::{json, Map, Value};
use windlass_engine::{
    Attached, ChunkQuery, FileFilter, FileStore, IngestionJob, IngestionOutcome, ListRequest,
    NewAttachment, NewBatch, NewChunk, NewVectorStore, QueryEmbedding, Searched, SortOrder,
    StoreError, VectorStoreStore, VectorStoreUpdate,
};
use windlass_protocol::*;
use windlass_store::SqliteStore;

const T: &str = "tenant-a";
const OTHER: &str = "tenant-b";
const MODEL: &str = "toy-embedder";

trait Retrieval: FileStore + VectorStoreStore {}
impl<S: FileStore + VectorStoreStore> Retrieval for S {}

struct Backend {
    name: &'static str,
    store: Arc<dyn Retrieval>,
    _db: Option<TempDb>,
}

async fn backends() -> Vec<Backend> {
    let db = TempDb::new();
    let sqlite = SqliteStore::open(&db.path).await.expect("open sqlite");
    #[allow(unused_mut)]
    let mut out = vec![Backend {
        name: "sqlite",
        store: Arc::new(sqlite),
        _db: Some(db),
    }];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let pg = windlass_store::PgStore::open(&url)
            .await
            .expect("open postgres");
        eprintln!(
            "postgres: pgvector {}",
            if pg.has_pgvector() {
                "in use"
            } else {
                "absent (fallback)"
            }
        );
        out.push(Backend {
            name: "postgres",
            store: Arc::new(pg),
            _db: None,
        });
    }
    out
}

fn upload(id: &str, name: &str, purpose: FilePurpose, created_at: u64) -> FileObject {
    FileObject::new(id.to_owned(), name.to_owned(), 0, purpose, created_at)
}

async fn put_file(s: &dyn Retrieval, tenant: &str, id: &str, name: &str) {
    let mut f = upload(id, name, FilePurpose::Assistants, 10);
    let body = format!("contents of {name}");
    f.bytes = body.len() as u64;
    s.create_file(tenant, &f, body.as_bytes())
        .await
        .expect("create file");
}

async fn new_store(s: &dyn Retrieval, tenant: &str, id: &str, model: Option<&str>) -> VectorStore {
    let metadata: Map<String, Value> = serde_json::from_value(json!({"team": "docs"})).unwrap();
    s.create_vector_store(
        tenant,
        &NewVectorStore {
            id: id.to_owned(),
            name: format!("store {id}"),
            description: None,
            created_at: 100,
            metadata,
            expires_after: None,
            embedding_model: model.map(str::to_owned),
        },
    )
    .await
    .expect("create store")
}

fn attachment(file: &str, attributes: Value) -> NewAttachment {
    NewAttachment {
        file_id: file.to_owned(),
        attributes: serde_json::from_value(attributes).unwrap(),
        chunking: StaticChunking::AUTO,
    }
}

fn chunk(text: &str, embedding: Option<[f32; 3]>) -> NewChunk {
    NewChunk {
        text: text.to_owned(),
        tokens: text.split_whitespace().count() as u32,
        embedding: embedding.map(|e| e.to_vec()),
    }
}

/// Claims every pending file and finishes each with `chunks_of(file_id)`.
async fn ingest_all(
    s: &dyn Retrieval,
    chunks_of: impl Fn(&str) -> Vec<NewChunk>,
) -> Vec<IngestionJob> {
    let jobs = s
        .claim_ingestions("w1", 1_000, 60, 100)
        .await
        .expect("claim");
    for job in &jobs {
        let chunks = chunks_of(&job.file_id);
        let usage_bytes = chunks.iter().map(|c| c.text.len() as u64).sum();
        let outcome = IngestionOutcome::Completed {
            chunks,
            usage_bytes,
        };
        assert!(s.finish_ingestion(job, &outcome).await.expect("finish"));
    }
    jobs
}

fn query(stores: &[&str], text: &str) -> ChunkQuery {
    ChunkQuery {
        vector_store_ids: stores.iter().map(|s| s.to_string()).collect(),
        text: text.to_owned(),
        embedding: None,
        filter: None,
        limit: 10,
        score_threshold: None,
        weights: None,
        now: now(),
    }
}

/// The real clock: reads derive `expired` from it, and searches judge it
/// at the query's `now`.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

fn file_ids(hits: &[windlass_engine::ChunkHit]) -> Vec<&str> {
    hits.iter().map(|h| h.file_id.as_str()).collect()
}

// ------------------------------------------------------------------ files ---

#[tokio::test]
async fn files_round_trip_page_and_stay_per_tenant() {
    for b in backends().await {
        let s = b.store.as_ref();
        let purposes = [
            FilePurpose::Assistants,
            FilePurpose::Batch,
            FilePurpose::Assistants,
        ];
        for (i, p) in purposes.iter().enumerate() {
            let f = upload(
                &format!("file-{i}"),
                &format!("f{i}.txt"),
                *p,
                10 + i as u64,
            );
            let mut f = f;
            f.bytes = 3;
            s.create_file(T, &f, &[i as u8, 0, 255])
                .await
                .expect("create");
        }
        let mut lying = upload("file-size", "s.txt", FilePurpose::Assistants, 1);
        lying.bytes = 999;
        s.create_file(T, &lying, b"four").await.unwrap();
        assert_eq!(
            s.get_file(T, "file-size").await.unwrap().unwrap().bytes,
            4,
            "{}",
            b.name
        );
        assert!(s.delete_file(T, "file-size").await.unwrap());
        let got = s.get_file(T, "file-1").await.unwrap().expect(b.name);
        assert_eq!(
            (got.filename.as_str(), got.purpose, got.bytes),
            ("f1.txt", FilePurpose::Batch, 3)
        );
        assert_eq!(
            s.file_content(T, "file-2").await.unwrap(),
            Some(vec![2, 0, 255])
        );
        // Another tenant's id is an unknown id.
        assert_eq!(s.get_file(OTHER, "file-1").await.unwrap(), None);
        assert_eq!(s.file_content(OTHER, "file-1").await.unwrap(), None);
        assert!(!s.delete_file(OTHER, "file-1").await.unwrap());
        assert!(s
            .list_files(OTHER, None, &ListRequest::first(10, SortOrder::Asc))
            .await
            .unwrap()
            .data
            .is_empty());
        let dup = s
            .create_file(T, &upload("file-1", "x", FilePurpose::Vision, 1), b"")
            .await;
        assert!(
            matches!(dup, Err(StoreError::Duplicate(_))),
            "{}: {dup:?}",
            b.name
        );

        let ids = |p: windlass_engine::Page<FileObject>| {
            (
                p.data.into_iter().map(|f| f.id).collect::<Vec<_>>(),
                p.has_more,
            )
        };
        let first = s
            .list_files(T, None, &ListRequest::first(2, SortOrder::Desc))
            .await
            .unwrap();
        assert_eq!(
            ids(first),
            (vec!["file-2".into(), "file-1".into()], true),
            "{}",
            b.name
        );
        let mut next = ListRequest::first(2, SortOrder::Desc);
        next.after = Some("file-1".into());
        assert_eq!(
            ids(s.list_files(T, None, &next).await.unwrap()),
            (vec!["file-0".into()], false)
        );
        let mut before = ListRequest::first(1, SortOrder::Asc);
        before.before = Some("file-2".into());
        assert_eq!(
            ids(s.list_files(T, None, &before).await.unwrap()),
            (vec!["file-1".into()], true)
        );
        let only = s
            .list_files(
                T,
                Some(FilePurpose::Assistants),
                &ListRequest::first(10, SortOrder::Asc),
            )
            .await
            .unwrap();
        assert_eq!(ids(only), (vec!["file-0".into(), "file-2".into()], false));
        let mut bad = ListRequest::first(2, SortOrder::Asc);
        bad.after = Some("file-nope".into());
        assert!(matches!(
            s.list_files(T, None, &bad).await,
            Err(StoreError::UnknownCursor(_))
        ));

        assert!(s.delete_file(T, "file-1").await.unwrap());
        assert_eq!(s.get_file(T, "file-1").await.unwrap(), None);
        assert!(!s.delete_file(T, "file-1").await.unwrap());
    }
}

// ---------------------------------------------------------- vector stores ---

#[tokio::test]
async fn vector_store_crud_and_tenancy() {
    for b in backends().await {
        let s = b.store.as_ref();
        let vs = new_store(s, T, "vs_1", None).await;
        assert_eq!(
            (vs.status, vs.search_mode, vs.file_counts.total),
            (VectorStoreStatus::Completed, SearchMode::Keyword, 0)
        );
        assert_eq!(vs.metadata["team"], "docs");
        let hybrid = new_store(s, T, "vs_2", Some(MODEL)).await;
        assert_eq!(
            (hybrid.search_mode, hybrid.embedding_model.as_deref()),
            (SearchMode::Hybrid, Some(MODEL))
        );
        assert_eq!(
            s.get_vector_store(OTHER, "vs_1").await.unwrap(),
            None,
            "{}",
            b.name
        );
        assert_eq!(
            s.update_vector_store(OTHER, "vs_1", &VectorStoreUpdate::default())
                .await
                .unwrap(),
            None
        );
        assert!(!s.delete_vector_store(OTHER, "vs_1").await.unwrap());

        let update = VectorStoreUpdate {
            name: Some("renamed".into()),
            description: None,
            expires_after: Some(Some(ExpiresAfter {
                anchor: ExpiresAnchor::LastActiveAt,
                days: 3,
            })),
            metadata: Some(Map::new()),
        };
        let up = s
            .update_vector_store(T, "vs_1", &update)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(up.name, "renamed");
        assert_eq!(up.expires_at, Some(100 + 3 * 86_400));
        assert!(up.metadata.is_empty());
        // Anchored at last activity, long past: expired.
        assert_eq!(up.status, VectorStoreStatus::Expired);
        s.touch_vector_stores(T, &["vs_1".into()], 4_000_000_000)
            .await
            .unwrap();
        // Use does not revive an expired store.
        let touched = s.get_vector_store(T, "vs_1").await.unwrap().unwrap();
        assert_eq!(touched.status, VectorStoreStatus::Expired);
        assert_eq!(touched.last_active_at, Some(100));
        let cleared = VectorStoreUpdate {
            expires_after: Some(None),
            ..Default::default()
        };
        let up = s
            .update_vector_store(T, "vs_1", &cleared)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (up.expires_after, up.expires_at, up.name.as_str()),
            (None, None, "renamed")
        );
        // Until the sweep has marked it, a store's policy can still be
        // lifted (see vector_store_expiry.rs for after).
        assert_eq!(up.status, VectorStoreStatus::Completed);

        let list = s
            .list_vector_stores(T, &ListRequest::first(10, SortOrder::Desc))
            .await
            .unwrap();
        assert_eq!(
            list.data.iter().map(|v| v.id.as_str()).collect::<Vec<_>>(),
            ["vs_2", "vs_1"]
        );
        assert!(s
            .list_vector_stores(OTHER, &ListRequest::first(10, SortOrder::Desc))
            .await
            .unwrap()
            .data
            .is_empty());
        assert!(s.delete_vector_store(T, "vs_1").await.unwrap());
        assert_eq!(s.get_vector_store(T, "vs_1").await.unwrap(), None);
    }
}

#[tokio::test]
async fn attaching_is_all_or_nothing_and_ingestion_completes_or_fails() {
    for b in backends().await {
        let s = b.store.as_ref();
        new_store(s, T, "vs_1", None).await;
        put_file(s, T, "file-a", "a.md").await;
        put_file(s, T, "file-b", "b.pdf").await;
        put_file(s, OTHER, "file-x", "x.md").await;

        let two = [
            attachment("file-a", json!({"lang": "en"})),
            attachment("file-x", json!(null)),
        ];
        let r = s.attach_files(T, "vs_1", &two, None, 50).await.unwrap();
        assert_eq!(r, Attached::UnknownFile("file-x".into()), "{}", b.name);
        assert_eq!(
            s.get_vector_store(T, "vs_1")
                .await
                .unwrap()
                .unwrap()
                .file_counts
                .total,
            0
        );
        let r = s
            .attach_files(
                OTHER,
                "vs_1",
                &[attachment("file-x", json!(null))],
                None,
                50,
            )
            .await
            .unwrap();
        assert_eq!(r, Attached::UnknownStore);

        let both = [
            attachment("file-a", json!({"lang": "en"})),
            attachment("file-b", json!(null)),
        ];
        let Attached::Done(files) = s.attach_files(T, "vs_1", &both, None, 50).await.unwrap()
        else {
            panic!()
        };
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].status, VectorStoreFileStatus::InProgress);
        assert_eq!(
            files[0].chunking_strategy,
            Some(ChunkingStrategy::Auto.resolved())
        );
        let vs = s.get_vector_store(T, "vs_1").await.unwrap().unwrap();
        assert_eq!(
            (vs.status, vs.file_counts.in_progress),
            (VectorStoreStatus::InProgress, 2)
        );

        let jobs = s.claim_ingestions("w1", 1_000, 60, 10).await.unwrap();
        assert_eq!(jobs.len(), 2, "{}", b.name);
        let a = jobs.iter().find(|j| j.file_id == "file-a").unwrap();
        assert_eq!(
            (
                a.tenant.as_str(),
                a.filename.as_str(),
                a.embedding_model.clone()
            ),
            (T, "a.md", None)
        );
        let done = IngestionOutcome::Completed {
            chunks: vec![chunk("alpha beta", None), chunk("gamma delta", None)],
            usage_bytes: 21,
        };
        assert!(s.finish_ingestion(a, &done).await.unwrap());
        let bjob = jobs.iter().find(|j| j.file_id == "file-b").unwrap();
        let failed = IngestionOutcome::Failed(LastError {
            code: LastErrorCode::InvalidFile,
            message: "not a PDF".into(),
        });
        assert!(s.finish_ingestion(bjob, &failed).await.unwrap());
        // A second finish finds nothing in progress and writes nothing.
        assert!(!s
            .finish_ingestion(
                a,
                &IngestionOutcome::Completed {
                    chunks: vec![],
                    usage_bytes: 0
                }
            )
            .await
            .unwrap());
        assert_eq!(
            s.file_chunks(T, "vs_1", "file-a").await.unwrap(),
            Some(vec!["alpha beta".into(), "gamma delta".into()])
        );
        assert_eq!(s.file_chunks(OTHER, "vs_1", "file-a").await.unwrap(), None);

        let fa = s
            .get_vector_store_file(T, "vs_1", "file-a")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (fa.status, fa.usage_bytes),
            (VectorStoreFileStatus::Completed, 21)
        );
        assert_eq!(
            fa.attributes,
            serde_json::from_value(json!({"lang": "en"})).unwrap()
        );
        let fb = s
            .get_vector_store_file(T, "vs_1", "file-b")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(fb.status, VectorStoreFileStatus::Failed);
        assert_eq!(fb.last_error.unwrap().code, LastErrorCode::InvalidFile);
        let vs = s.get_vector_store(T, "vs_1").await.unwrap().unwrap();
        assert_eq!(
            (vs.status, vs.usage_bytes),
            (VectorStoreStatus::Completed, 21)
        );
        assert_eq!(
            (
                vs.file_counts.completed,
                vs.file_counts.failed,
                vs.file_counts.total
            ),
            (1, 1, 2)
        );

        let failed_only = FileFilter {
            status: Some(VectorStoreFileStatus::Failed),
            batch_id: None,
        };
        let page = s
            .list_vector_store_files(
                T,
                "vs_1",
                &failed_only,
                &ListRequest::first(10, SortOrder::Asc),
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            page.data.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
            ["file-b"]
        );
        assert_eq!(
            s.list_vector_store_files(
                OTHER,
                "vs_1",
                &FileFilter::default(),
                &ListRequest::first(10, SortOrder::Asc)
            )
            .await
            .unwrap(),
            None
        );

        // A failed file attached again is ingested anew.
        let Attached::Done(again) = s
            .attach_files(T, "vs_1", &[attachment("file-b", json!(null))], None, 60)
            .await
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (again[0].status, again[0].last_error.clone()),
            (VectorStoreFileStatus::InProgress, None)
        );
        // A completed one keeps its chunks.
        s.attach_files(T, "vs_1", &[attachment("file-a", json!(null))], None, 60)
            .await
            .unwrap();
        assert_eq!(
            s.get_vector_store_file(T, "vs_1", "file-a")
                .await
                .unwrap()
                .unwrap()
                .status,
            VectorStoreFileStatus::Completed
        );

        let attrs: Attributes = serde_json::from_value(json!({"lang": "de", "v": 2})).unwrap();
        let up = s
            .update_file_attributes(T, "vs_1", "file-a", Some(&attrs))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(up.attributes, Some(attrs));
        assert_eq!(
            s.update_file_attributes(OTHER, "vs_1", "file-a", None)
                .await
                .unwrap(),
            None
        );

        assert!(!s.detach_file(OTHER, "vs_1", "file-a").await.unwrap());
        assert!(s.detach_file(T, "vs_1", "file-a").await.unwrap());
        assert_eq!(s.file_chunks(T, "vs_1", "file-a").await.unwrap(), None);
        assert!(
            s.get_file(T, "file-a").await.unwrap().is_some(),
            "detaching keeps the file"
        );
    }
}

#[tokio::test]
async fn claims_lease_and_survive_a_dead_worker() {
    for b in backends().await {
        let s = b.store.as_ref();
        new_store(s, T, "vs_1", Some(MODEL)).await;
        put_file(s, T, "file-a", "a.txt").await;
        s.attach_files(T, "vs_1", &[attachment("file-a", json!(null))], None, 1)
            .await
            .unwrap();
        let first = s.claim_ingestions("dead", 1_000, 60, 10).await.unwrap();
        assert_eq!(first.len(), 1, "{}", b.name);
        assert_eq!(first[0].embedding_model.as_deref(), Some(MODEL));
        // Held: nobody else gets it while the lease runs.
        assert!(s
            .claim_ingestions("next", 1_030, 60, 10)
            .await
            .unwrap()
            .is_empty());
        s.renew_ingestion_claims("dead", 1_100).await.unwrap();
        assert!(s
            .claim_ingestions("next", 1_090, 60, 10)
            .await
            .unwrap()
            .is_empty());
        // The holder died: after its lease another worker takes the file.
        let again = s.claim_ingestions("next", 1_101, 60, 10).await.unwrap();
        assert_eq!(again, first);
        let outcome = IngestionOutcome::Completed {
            chunks: vec![chunk("text", Some([1.0, 0.0, 0.0]))],
            usage_bytes: 4,
        };
        assert!(s.finish_ingestion(&again[0], &outcome).await.unwrap());
        assert!(s
            .claim_ingestions("next", 9_999, 60, 10)
            .await
            .unwrap()
            .is_empty());
    }
}

#[tokio::test]
async fn batches_list_and_cancel() {
    for b in backends().await {
        let s = b.store.as_ref();
        new_store(s, T, "vs_1", None).await;
        for f in ["file-1", "file-2", "file-3"] {
            put_file(s, T, f, &format!("{f}.txt")).await;
        }
        s.attach_files(T, "vs_1", &[attachment("file-3", json!(null))], None, 1)
            .await
            .unwrap();
        let batch = NewBatch {
            id: "vsfb_1".into(),
            created_at: 7,
        };
        let files = [
            attachment("file-1", json!(null)),
            attachment("file-2", json!(null)),
        ];
        s.attach_files(T, "vs_1", &files, Some(&batch), 7)
            .await
            .unwrap();
        let got = s
            .get_file_batch(T, "vs_1", "vsfb_1")
            .await
            .unwrap()
            .expect(b.name);
        assert_eq!(
            (
                got.status,
                got.file_counts.in_progress,
                got.file_counts.total
            ),
            (VectorStoreFileStatus::InProgress, 2, 2)
        );
        assert_eq!(
            s.get_file_batch(OTHER, "vs_1", "vsfb_1").await.unwrap(),
            None
        );
        let in_batch = FileFilter {
            status: None,
            batch_id: Some("vsfb_1".into()),
        };
        let listed = s
            .list_vector_store_files(
                T,
                "vs_1",
                &in_batch,
                &ListRequest::first(10, SortOrder::Asc),
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            listed
                .data
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>(),
            ["file-1", "file-2"]
        );

        let jobs = s.claim_ingestions("w", 10, 60, 10).await.unwrap();
        let one = jobs.iter().find(|j| j.file_id == "file-1").unwrap().clone();
        let ok = IngestionOutcome::Completed {
            chunks: vec![chunk("one", None)],
            usage_bytes: 3,
        };
        assert!(s.finish_ingestion(&one, &ok).await.unwrap());
        let cancelled = s
            .cancel_file_batch(T, "vs_1", "vsfb_1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(cancelled.status, VectorStoreFileStatus::Cancelled);
        assert_eq!(
            (
                cancelled.file_counts.completed,
                cancelled.file_counts.cancelled
            ),
            (1, 1)
        );
        // The worker still holding file-2 finds it cancelled: nothing written.
        let two = jobs.iter().find(|j| j.file_id == "file-2").unwrap();
        assert!(!s.finish_ingestion(two, &ok).await.unwrap());
        assert_eq!(
            s.file_chunks(T, "vs_1", "file-2").await.unwrap(),
            Some(vec![])
        );
        // Files outside the batch are untouched.
        assert_eq!(
            s.get_vector_store_file(T, "vs_1", "file-3")
                .await
                .unwrap()
                .unwrap()
                .status,
            VectorStoreFileStatus::InProgress
        );
        assert_eq!(
            s.cancel_file_batch(OTHER, "vs_1", "vsfb_1").await.unwrap(),
            None
        );
    }
}

// ----------------------------------------------------------------- search ---

/// Two stores of one tenant, one of another; hybrid stores embed with toy
/// 3-d vectors: x = cooking, y = finance, z = travel.
async fn corpus(s: &dyn Retrieval) {
    new_store(s, T, "vs_docs", Some(MODEL)).await;
    new_store(s, T, "vs_more", Some(MODEL)).await;
    new_store(s, OTHER, "vs_theirs", Some(MODEL)).await;
    for (f, name) in [
        ("file-cook", "cooking.md"),
        ("file-money", "finance.txt"),
        ("file-trip", "travel.html"),
    ] {
        put_file(s, T, f, name).await;
    }
    put_file(s, OTHER, "file-secret", "secret.md").await;
    let attach = |f: &str, a: Value| attachment(f, a);
    s.attach_files(
        T,
        "vs_docs",
        &[
            attach("file-cook", json!({"topic": "food", "year": 2021})),
            attach("file-money", json!({"topic": "money", "year": 2024})),
        ],
        None,
        1,
    )
    .await
    .unwrap();
    s.attach_files(
        T,
        "vs_more",
        &[
            attach("file-trip", json!({"topic": "travel", "year": 2023})),
            attach("file-money", json!({"topic": "money", "year": 2019})),
        ],
        None,
        1,
    )
    .await
    .unwrap();
    s.attach_files(
        OTHER,
        "vs_theirs",
        &[attach("file-secret", json!({}))],
        None,
        1,
    )
    .await
    .unwrap();
    ingest_all(s, |file| match file {
        "file-cook" => vec![
            chunk(
                "Knead the bread dough for ten minutes, then let it rise.",
                Some([1.0, 0.0, 0.1]),
            ),
            chunk(
                "Simmer the tomato sauce slowly with garlic.",
                Some([0.9, 0.1, 0.0]),
            ),
        ],
        "file-money" => vec![
            chunk(
                "The refund policy allows returns within 30 days.",
                Some([0.0, 1.0, 0.0]),
            ),
            chunk(
                "Quarterly budget reports are due in April.",
                Some([0.1, 0.9, 0.0]),
            ),
        ],
        "file-trip" => vec![chunk(
            "Pack a passport and a rain jacket for the trip to Norway.",
            Some([0.0, 0.1, 1.0]),
        )],
        _ => vec![chunk(
            "The secret refund code is 1234.",
            Some([0.0, 1.0, 0.0]),
        )],
    })
    .await;
}

#[tokio::test]
async fn keyword_search_takes_any_question() {
    for b in backends().await {
        let s = b.store.as_ref();
        corpus(s).await;
        let out = s
            .search(T, &query(&["vs_docs"], "What is the refund policy?"))
            .await
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(
            out.mode,
            SearchMode::Keyword,
            "no query embedding: keyword only"
        );
        assert_eq!(file_ids(&out.hits), ["file-money"], "{}", b.name);
        let hit = &out.hits[0];
        assert_eq!(
            (
                hit.filename.as_str(),
                hit.chunk_index,
                hit.vector_store_id.as_str()
            ),
            ("finance.txt", 0, "vs_docs")
        );
        assert!(hit.text.contains("30 days"));
        assert_eq!(hit.score, 1.0);
        assert_eq!(
            hit.attributes["topic"],
            AttributeValue::String("money".into())
        );
        // Stemming: "kneading" finds "Knead".
        let out = s
            .search(T, &query(&["vs_docs"], "kneading"))
            .await
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(file_ids(&out.hits), ["file-cook"], "{}", b.name);
        for q in [
            "what's C++?",
            "\"unbalanced",
            "refund AND",
            "*",
            "NEAR(",
            "tomato) OR (",
            "a:b -c ^d",
            "''",
            "",
            "!!!",
            "budget's \"report\"",
        ] {
            let r = s.search(T, &query(&["vs_docs", "vs_more"], q)).await;
            assert!(
                matches!(r, Ok(Searched::Done(_))),
                "{}: {q:?} -> {r:?}",
                b.name
            );
        }
        let out = s
            .search(T, &query(&["vs_docs"], "budget's \"report\""))
            .await
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(file_ids(&out.hits), ["file-money"]);
        assert_eq!(out.hits[0].chunk_index, 1);
    }
}

#[tokio::test]
async fn search_scope_tenancy_filters_limit_and_threshold() {
    for b in backends().await {
        let s = b.store.as_ref();
        corpus(s).await;
        assert_eq!(
            s.search(T, &query(&["vs_docs", "vs_nope"], "refund"))
                .await
                .unwrap(),
            Searched::UnknownStore
        );
        assert_eq!(
            s.search(T, &query(&["vs_theirs"], "refund")).await.unwrap(),
            Searched::UnknownStore,
            "{}",
            b.name
        );
        // Across two stores: the file attached to both is found in each.
        let out = s
            .search(T, &query(&["vs_docs", "vs_more"], "refund passport"))
            .await
            .unwrap()
            .found()
            .unwrap();
        let mut found: Vec<(&str, &str)> = out
            .hits
            .iter()
            .map(|h| (h.vector_store_id.as_str(), h.file_id.as_str()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("vs_docs", "file-money"),
                ("vs_more", "file-money"),
                ("vs_more", "file-trip")
            ],
            "{}",
            b.name
        );
        assert!(out.hits.iter().all(|h| !h.text.contains("secret")));

        let mut q = query(&["vs_docs", "vs_more"], "refund passport");
        q.filter = Some(
            serde_json::from_value(json!({"type": "gte", "key": "year", "value": 2023})).unwrap(),
        );
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        let mut found: Vec<(&str, &str)> = out
            .hits
            .iter()
            .map(|h| (h.vector_store_id.as_str(), h.file_id.as_str()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [("vs_docs", "file-money"), ("vs_more", "file-trip")],
            "attributes are per store"
        );
        q.filter = Some(
            serde_json::from_value(json!({"type": "or", "filters": [
                {"type": "eq", "key": "topic", "value": "travel"},
                {"type": "in", "key": "year", "value": [2021]}
            ]}))
            .unwrap(),
        );
        q.text = "passport bread refund".into();
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        let mut files = file_ids(&out.hits);
        files.sort();
        assert_eq!(files, ["file-cook", "file-trip"]);

        let mut q = query(&["vs_docs", "vs_more"], "refund passport bread budget");
        q.limit = 2;
        assert_eq!(
            s.search(T, &q).await.unwrap().found().unwrap().hits.len(),
            2
        );
        q.limit = 10;
        q.score_threshold = Some(0.99);
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        assert_eq!(out.hits.len(), 1, "only the first keyword hit scores 1");
        assert!(out.hits[0].score >= 0.99);
    }
}

#[tokio::test]
async fn hybrid_search_fuses_embeddings_of_the_same_model() {
    for b in backends().await {
        let s = b.store.as_ref();
        corpus(s).await;
        // No keyword overlap at all: the embedding finds the finance chunk.
        let mut q = query(&["vs_docs"], "how do I get my cash back");
        q.embedding = Some(QueryEmbedding {
            model: MODEL.into(),
            vector: vec![0.0, 1.0, 0.05],
        });
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        assert_eq!(out.mode, SearchMode::Hybrid, "{}", b.name);
        assert_eq!(
            out.hits[0].text,
            "The refund policy allows returns within 30 days."
        );
        assert_eq!(
            out.hits.len(),
            4,
            "every embedded chunk of the store is ranked"
        );
        // Agreeing rankings: first in both scores 1.
        q.text = "refund".into();
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        assert_eq!((out.hits[0].chunk_index, out.hits[0].score), (0, 1.0));
        // Weights decide between disagreeing rankings.
        q.text = "bread".into();
        q.weights = Some(HybridSearch {
            embedding_weight: 1.0,
            text_weight: 0.01,
        });
        assert_eq!(
            s.search(T, &q).await.unwrap().found().unwrap().hits[0].file_id,
            "file-money"
        );
        q.weights = Some(HybridSearch {
            embedding_weight: 0.1,
            text_weight: 1.0,
        });
        assert_eq!(
            s.search(T, &q).await.unwrap().found().unwrap().hits[0].file_id,
            "file-cook"
        );
        // Another model's vectors are never compared: keyword only.
        q.embedding = Some(QueryEmbedding {
            model: "other-model".into(),
            vector: vec![0.0, 1.0, 0.0],
        });
        let out = s.search(T, &q).await.unwrap().found().unwrap();
        assert_eq!(out.mode, SearchMode::Keyword);
        assert_eq!(file_ids(&out.hits), ["file-cook"]);
        // A query vector of other dimensions matches nothing, and fails nothing.
        q.embedding = Some(QueryEmbedding {
            model: MODEL.into(),
            vector: vec![1.0, 0.0],
        });
        assert_eq!(
            file_ids(&s.search(T, &q).await.unwrap().found().unwrap().hits),
            ["file-cook"]
        );
    }
}

#[tokio::test]
async fn deleting_files_and_stores_removes_their_chunks_everywhere() {
    for b in backends().await {
        let s = b.store.as_ref();
        corpus(s).await;
        let both = ["vs_docs", "vs_more"];
        assert!(s.delete_file(T, "file-money").await.unwrap());
        let out = s
            .search(T, &query(&both, "refund budget"))
            .await
            .unwrap()
            .found()
            .unwrap();
        assert!(out.hits.is_empty(), "{}: {:?}", b.name, out.hits);
        assert_eq!(
            s.get_vector_store_file(T, "vs_more", "file-money")
                .await
                .unwrap(),
            None
        );
        let vs = s.get_vector_store(T, "vs_docs").await.unwrap().unwrap();
        assert_eq!(vs.file_counts.total, 1);
        assert!(s.delete_vector_store(T, "vs_more").await.unwrap());
        assert_eq!(
            s.search(T, &query(&["vs_more"], "passport")).await.unwrap(),
            Searched::UnknownStore
        );
        assert_eq!(
            s.search(T, &query(&["vs_docs"], "passport"))
                .await
                .unwrap()
                .found()
                .unwrap()
                .hits,
            vec![]
        );
        assert!(
            s.get_file(T, "file-trip").await.unwrap().is_some(),
            "deleting a store keeps its files"
        );
        // The other tenant's data is untouched throughout.
        assert_eq!(
            s.file_chunks(OTHER, "vs_theirs", "file-secret")
                .await
                .unwrap()
                .map(|c| c.len()),
            Some(1)
        );
    }
}

#[tokio::test]
async fn backends_answer_alike() {
    let mut answers = Vec::new();
    for b in backends().await {
        let s = b.store.as_ref();
        corpus(s).await;
        let mut out = Vec::new();
        for text in [
            "refund policy",
            "garlic sauce",
            "trip passport jacket",
            "reports April budget",
        ] {
            for embed in [None, Some(vec![0.2f32, 0.7, 0.3])] {
                let mut q = query(&["vs_docs", "vs_more"], text);
                q.embedding = embed.map(|vector| QueryEmbedding {
                    model: MODEL.into(),
                    vector,
                });
                let hits = s.search(T, &q).await.unwrap().found().unwrap().hits;
                out.push(
                    hits.into_iter()
                        .map(|h| {
                            (
                                h.vector_store_id,
                                h.file_id,
                                h.chunk_index,
                                (h.score * 1e6).round(),
                            )
                        })
                        .collect::<Vec<_>>(),
                );
            }
        }
        answers.push((b.name, out));
    }
    for pair in answers.windows(2) {
        assert_eq!(
            pair[0].1, pair[1].1,
            "{} and {} disagree",
            pair[0].0, pair[1].0
        );
    }
}

//! A measurement, not a test: search latency over N chunks on SQLite (and
//! Postgres when `WINDLASS_TEST_PG` is set), keyword-only and hybrid with
//! 384-dimension vectors. Ignored by default; prints, asserts nothing about
//! time:
//!
//!   cargo test --release -p windlass-store --test search_scale -- --ignored --nocapture
//!   WINDLASS_SCALE_CHUNKS=10000 ./scripts/postgres.sh cargo test --release -p windlass-store \
//!       --features postgres --test search_scale -- --ignored --nocapture
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TempDb;
use windlass_engine::{
    ChunkQuery, FileStore, IngestionOutcome, NewAttachment, NewChunk, NewVectorStore,
    QueryEmbedding, VectorStoreStore,
};
use windlass_protocol::{FileObject, FilePurpose, StaticChunking};
use windlass_store::SqliteStore;

trait Retrieval: FileStore + VectorStoreStore {}
impl<S: FileStore + VectorStoreStore> Retrieval for S {}

const DIMS: usize = 384;
const WORDS: &[&str] = &[
    "refund", "policy", "kayak", "rudder", "tent", "pole", "stove", "valve", "shipping", "express",
    "voucher", "points", "jacket", "zip", "repair", "warranty", "boots", "sizing", "gloves",
    "solar",
];

/// A cheap deterministic pseudo-random sequence (no dependency).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn text(seed: &mut u64) -> String {
    (0..120)
        .map(|_| WORDS[(lcg(seed) % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

fn vector(seed: &mut u64) -> Vec<f32> {
    (0..DIMS)
        .map(|_| (lcg(seed) % 1000) as f32 / 1000.0 - 0.5)
        .collect()
}

async fn fill(s: &dyn Retrieval, chunks: usize) {
    let meta = Default::default();
    s.create_vector_store(
        "t",
        &NewVectorStore {
            id: "vs".into(),
            name: "vs".into(),
            description: None,
            created_at: 1,
            metadata: meta,
            expires_after: None,
            embedding_model: Some("m".into()),
        },
    )
    .await
    .unwrap();
    let per_file = 500;
    let mut seed = 7;
    for f in 0..chunks.div_ceil(per_file) {
        let id = format!("file-{f}");
        s.create_file(
            "t",
            &FileObject::new(
                id.clone(),
                format!("{f}.txt"),
                1,
                FilePurpose::Assistants,
                1,
            ),
            b"x",
        )
        .await
        .unwrap();
        s.attach_files(
            "t",
            "vs",
            &[NewAttachment {
                file_id: id,
                attributes: None,
                chunking: StaticChunking::AUTO,
            }],
            None,
            1,
        )
        .await
        .unwrap();
        let job = s.claim_ingestions("w", 1, 600, 1).await.unwrap().remove(0);
        let n = per_file.min(chunks - f * per_file);
        let chunks = (0..n)
            .map(|_| NewChunk {
                text: text(&mut seed),
                tokens: 120,
                embedding: Some(vector(&mut seed)),
            })
            .collect();
        assert!(s
            .finish_ingestion(
                &job,
                &IngestionOutcome::Completed {
                    chunks,
                    usage_bytes: 1
                }
            )
            .await
            .unwrap());
    }
}

async fn measure(name: &str, s: &dyn Retrieval, chunks: usize) {
    let t = Instant::now();
    fill(s, chunks).await;
    eprintln!("{name}: {chunks} chunks written in {:?}", t.elapsed());
    let mut seed = 99;
    for hybrid in [false, true] {
        let mut times: Vec<Duration> = Vec::new();
        for i in 0..40 {
            let q = ChunkQuery {
                vector_store_ids: vec!["vs".into()],
                text: format!(
                    "{} {}",
                    WORDS[i % WORDS.len()],
                    WORDS[(i * 7) % WORDS.len()]
                ),
                embedding: hybrid.then(|| QueryEmbedding {
                    model: "m".into(),
                    vector: vector(&mut seed),
                }),
                filter: None,
                limit: 10,
                score_threshold: None,
                weights: None,
                now: 0,
            };
            let t = Instant::now();
            let out = s.search("t", &q).await.unwrap().found().unwrap();
            times.push(t.elapsed());
            assert_eq!(out.hits.len(), 10);
        }
        times.sort();
        eprintln!(
            "{name}: {} search over {chunks} chunks: p50 {:?}, p99 {:?}",
            if hybrid { "hybrid" } else { "keyword" },
            times[times.len() / 2],
            times[times.len() * 99 / 100]
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement; run with --ignored --nocapture"]
async fn search_latency() {
    let chunks: usize = std::env::var("WINDLASS_SCALE_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    let db = TempDb::new();
    let sqlite: Arc<dyn Retrieval> = Arc::new(SqliteStore::open(&db.path).await.unwrap());
    measure("sqlite", &*sqlite, chunks).await;
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let pg = windlass_store::PgStore::open(&url).await.unwrap();
        let name = if pg.has_pgvector() {
            "postgres+pgvector"
        } else {
            "postgres"
        };
        measure(name, &pg, chunks).await;
    }
}

//! A measurement, not a test: search latency through the route
//! (`POST /v1/vector_stores/{id}/search` on the real binary) over N chunks,
//! on SQLite and (under `scripts/postgres.sh`) Postgres. The chunks are
//! written straight into the store with synthetic text and vectors (what
//! ingestion would write, without ingesting N chunks' worth of files):
//! 120 words each from a 5,000-word vocabulary with a power-law-like
//! frequency. Then a fresh `windlass serve` answers sequential searches,
//! each a question with three such words. Ignored by default; prints,
//! asserts nothing about time:
//!
//!   WINDLASS_SCALE_CHUNKS=10000 nice ./scripts/postgres.sh cargo test --release \
//!       -p windlass-cli --test resources search_latency -- --ignored --nocapture
//!
//! Keyword-only, and hybrid: the hybrid store's chunks get random
//! 384-dimension vectors (all-MiniLM-L6-v2's shape) and the server embeds
//! each query with the in-test stand-in (`fake_embed.rs`, 384 dimensions,
//! well under a millisecond), so the figure is the gateway's and the
//! store's own time. When `WINDLASS_TEST_EMBED` names a real embedding
//! upstream (the rig's `http://127.0.0.1:8083/v1` serves
//! all-MiniLM-L6-v2), its time to embed one query is measured apart: a
//! hybrid search with that model costs about the sum.

use std::time::{Duration, Instant};

use serde_json::json;
use windlass_engine::{
    FileStore, IngestionOutcome, NewAttachment, NewChunk, NewVectorStore, VectorStoreStore,
    DEFAULT_TENANT,
};
use windlass_protocol::{FileObject, FilePurpose, StaticChunking};

use crate::fake_embed::FakeEmbed;
use crate::support::{config, databases, load, Server};

/// Distinct words of the synthetic text.
const VOCABULARY: u64 = 5_000;
const PER_FILE: usize = 500;
/// Searches timed per store, unless `WINDLASS_SCALE_QUERIES` says.
const QUERIES: usize = 200;

trait Retrieval: FileStore + VectorStoreStore {}
impl<S: FileStore + VectorStoreStore> Retrieval for S {}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

/// A word of a skewed vocabulary: word `i` is drawn about as often as a
/// power law says (a few very common words, a long tail), like prose.
fn word(seed: &mut u64) -> String {
    let u = (lcg(seed) % 1_000_000) as f64 / 1_000_000.0;
    let mut i = (VOCABULARY as f64 * u.powi(3)) as u64;
    let mut w = String::from("w");
    loop {
        w.push(char::from(b'a' + (i % 26) as u8));
        i /= 26;
        if i == 0 {
            return w;
        }
    }
}

/// About 120 tokens of text, like a small chunk.
fn text(seed: &mut u64) -> String {
    (0..120).map(|_| word(seed)).collect::<Vec<_>>().join(" ")
}

fn vector(seed: &mut u64, dims: usize) -> Vec<f32> {
    (0..dims)
        .map(|_| (lcg(seed) % 2000) as f32 / 1000.0 - 1.0)
        .collect()
}

async fn open(db: &str) -> Box<dyn Retrieval> {
    if db.starts_with("postgres") {
        let pg = windlass_store::PgStore::open(db).await.expect("open pg");
        eprintln!(
            "postgres: pgvector {}",
            if pg.has_pgvector() {
                "in use"
            } else {
                "absent (vectors compared in the gateway)"
            }
        );
        Box::new(pg)
    } else {
        Box::new(
            windlass_store::SqliteStore::open(db)
                .await
                .expect("open sqlite"),
        )
    }
}

/// A store of `chunks` chunks (`model`: with vectors of `dims`).
async fn fill(s: &dyn Retrieval, id: &str, chunks: usize, model: Option<(&str, usize)>) {
    let tenant = DEFAULT_TENANT;
    s.create_vector_store(
        tenant,
        &NewVectorStore {
            id: id.to_owned(),
            name: id.to_owned(),
            description: None,
            created_at: 1,
            metadata: Default::default(),
            expires_after: None,
            embedding_model: model.map(|(m, _)| m.to_owned()),
        },
    )
    .await
    .expect("create store");
    let mut seed = 7;
    for f in 0..chunks.div_ceil(PER_FILE) {
        let file = format!("file-{id}-{f}");
        let object = FileObject::new(
            file.clone(),
            format!("{f}.txt"),
            1,
            FilePurpose::Assistants,
            1,
        );
        s.create_file(tenant, &object, b"x").await.expect("file");
        let attach = NewAttachment {
            file_id: file,
            attributes: None,
            chunking: StaticChunking::AUTO,
        };
        s.attach_files(tenant, id, &[attach], None, 1)
            .await
            .expect("attach");
        let job = s
            .claim_ingestions("fill", 1, 600, 1)
            .await
            .expect("claim")
            .remove(0);
        let n = PER_FILE.min(chunks - f * PER_FILE);
        let chunks = (0..n)
            .map(|_| NewChunk {
                text: text(&mut seed),
                tokens: 120,
                embedding: model.map(|(_, dims)| vector(&mut seed, dims)),
            })
            .collect();
        let outcome = IngestionOutcome::Completed {
            chunks,
            usage_bytes: 1,
        };
        assert!(s.finish_ingestion(&job, &outcome).await.expect("finish"));
    }
}

fn queries() -> usize {
    std::env::var("WINDLASS_SCALE_QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(QUERIES)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// p50 and p99 of sequential searches of `store` through the route.
async fn time_searches(server: &Server, store: &str) -> (Duration, Duration) {
    let me = server.me();
    let path = format!("/v1/vector_stores/{store}/search");
    let mut seed = 11;
    let queries = queries();
    let mut times = Vec::with_capacity(queries);
    for i in 0..queries + 10 {
        let query = format!(
            "how do I {} the {} {}?",
            word(&mut seed),
            word(&mut seed),
            word(&mut seed)
        );
        let t = Instant::now();
        let (status, page) = me.post(&path, &json!({"query": query})).await;
        let took = t.elapsed();
        assert_eq!(status, 200, "{page}");
        assert!(!page["data"].as_array().expect("data").is_empty());
        if i >= 10 {
            times.push(took);
        }
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

/// The embedding upstream's own time for one query, median of a few.
async fn embed_time(url: &str, model: &str) -> Duration {
    let client = reqwest::Client::new();
    let mut times = Vec::new();
    for i in 0..10 {
        let t = Instant::now();
        let r = client
            .post(format!("{url}/embeddings"))
            .json(&json!({"model": model, "input": [format!("how do I repair the kayak {i}?")]}))
            .send()
            .await
            .expect("embed");
        assert!(r.status().is_success());
        let _ = r.bytes().await;
        times.push(t.elapsed());
    }
    times.sort();
    percentile(&times, 0.5)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run with --ignored --nocapture"]
async fn search_latency() {
    let chunks: usize = std::env::var("WINDLASS_SCALE_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let real = std::env::var("WINDLASS_TEST_EMBED").ok();
    let model = "all-minilm-l6-v2";
    let stand_in = FakeEmbed::with_dimensions(384).await;
    for db in databases().await {
        let backend = if db.starts_with("postgres") {
            "postgres"
        } else {
            "sqlite"
        };
        let t = Instant::now();
        {
            let s = open(&db).await;
            fill(s.as_ref(), "vs_keyword", chunks, None).await;
            fill(s.as_ref(), "vs_hybrid", chunks, Some((model, 384))).await;
        }
        eprintln!("{backend}: {chunks} chunks written in {:?}", t.elapsed());
        let server = Server::start(&db, None).await;
        let (p50, p99) = time_searches(&server, "vs_keyword").await;
        eprintln!(
            "{backend}: {chunks} chunks keyword-only: p50 {p50:?} p99 {p99:?} ({} sequential searches; load {})",
            queries(),
            load()
        );
        drop(server);
        let cfg = config(&format!(
            "[upstream]\nurl = \"{}\"\n[retrieval]\nembedding_model = \"{model}\"\n",
            stand_in.url()
        ));
        let server = Server::start(&db, Some(&cfg)).await;
        let (p50, p99) = time_searches(&server, "vs_hybrid").await;
        eprintln!(
            "{backend}: {chunks} chunks hybrid (384 dims, stand-in query embedder): p50 {p50:?} p99 {p99:?} ({} sequential searches; load {})",
            queries(),
            load()
        );
    }
    if let Some(url) = &real {
        let embedding = embed_time(url, model).await;
        eprintln!(
            "the real {model} at {url}: about {embedding:?} to embed one query (median of 10; load {})",
            load()
        );
    }
}

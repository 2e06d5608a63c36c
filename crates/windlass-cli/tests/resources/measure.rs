//! A measurement, not a test: ingestion throughput and the server's peak
//! memory while it ingests one large text file through the real binary
//! (upload, attach, background worker). Ignored by default; prints and
//! asserts nothing about time:
//!
//!   WINDLASS_MEASURE_MB=50 cargo test --release -p windlass-cli --test resources \
//!       measure -- --ignored --nocapture
//!
//! Keyword-only (no embedding time in it). With `WINDLASS_TEST_EMBED` set
//! (`scripts/embed-server.sh`) it also ingests a smaller file hybrid and
//! reports the time the embedding upstream took apart: 1 MiB, or
//! `WINDLASS_MEASURE_HYBRID_KB` KiB (a CPU model embeds a few chunks a
//! second, so a MiB of 800-token chunks takes many minutes there).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{config, databases, load, Server};

/// Peak resident memory of a process (Linux `VmHWM`), in MiB.
fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Sentences of ordinary prose, `mb` MiB of them.
fn text(mb: usize) -> Vec<u8> {
    text_kib(mb << 10)
}

/// Sentences of ordinary prose, `kib` KiB of them.
fn text_kib(kib: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "refund", "policy", "kayak", "rudder", "tent", "pole", "stove", "valve", "shipping",
        "express", "voucher", "points", "jacket", "zip", "repair", "warranty", "boots", "the",
        "and", "within", "days", "customer", "order", "returns",
    ];
    let mut out = Vec::with_capacity(kib << 10);
    let mut seed = 7u64;
    while out.len() < kib << 10 {
        for _ in 0..14 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.extend_from_slice(WORDS[(seed >> 33) as usize % WORDS.len()].as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(b".\n");
    }
    out
}

/// Upload and ingestion times, and the store and file ids.
async fn ingest(server: &Server, name: &str, bytes: &[u8]) -> (Duration, Duration, String, String) {
    let me = server.me();
    let started = Instant::now();
    let file = me.upload_file(name, bytes).await;
    let uploaded = started.elapsed();
    let (_, store) = me
        .post("/v1/vector_stores", &json!({"file_ids": [file]}))
        .await;
    let vs = store["id"].as_str().expect("store").to_owned();
    let t = Instant::now();
    loop {
        let (_, f) = me
            .get(&format!("/v1/vector_stores/{vs}/files/{file}"))
            .await;
        if f["status"] != "in_progress" {
            assert_eq!(f["status"], "completed", "{f}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (uploaded, t.elapsed(), vs, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run with --ignored --nocapture"]
async fn measure_ingestion() {
    let mb: usize = std::env::var("WINDLASS_MEASURE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let bytes = text(mb);
    for db in databases().await {
        let backend = if db.starts_with("postgres") {
            "postgres"
        } else {
            "sqlite"
        };
        let server = Server::start(&db, None).await;
        let (upload, ingest_time, _, _) = ingest(&server, "big.txt", &bytes).await;
        eprintln!(
            "{backend}: {mb} MiB keyword-only: upload {upload:?}, ingestion {ingest_time:?} ({:.2} MiB/s), server peak RSS {:.0} MiB; load {}",
            mb as f64 / ingest_time.as_secs_f64(),
            peak_rss_mib(server.pid()).unwrap_or(f64::NAN),
            load()
        );
        let Ok(embed) = std::env::var("WINDLASS_TEST_EMBED") else {
            continue;
        };
        let model = std::env::var("WINDLASS_TEST_EMBED_MODEL")
            .unwrap_or_else(|_| "all-minilm-l6-v2".into());
        let cfg = config(&format!(
            "[upstream]\nurl = \"{embed}\"\n[retrieval]\nembedding_model = \"{model}\"\n"
        ));
        drop(server);
        let server = Server::start(&db, Some(&cfg)).await;
        let kib: usize = std::env::var("WINDLASS_MEASURE_HYBRID_KB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1024);
        let small = text_kib(kib);
        let mib = kib as f64 / 1024.0;
        let (_, hybrid, vs, file) = ingest(&server, "small.txt", &small).await;
        // The same chunks embedded alone: the upstream's share.
        let (_, content) = server
            .me()
            .get(&format!("/v1/vector_stores/{vs}/files/{file}/content"))
            .await;
        let chunks: Vec<String> = content["data"]
            .as_array()
            .expect("chunks")
            .iter()
            .map(|c| c["text"].as_str().unwrap_or_default().to_owned())
            .collect();
        let t = Instant::now();
        for batch in chunks.chunks(32) {
            let (status, _) = server
                .me()
                .post("/v1/embeddings", &json!({"model": model, "input": batch}))
                .await;
            assert_eq!(status, 200);
        }
        let embedding = t.elapsed();
        // The chunks embedded again alone can take longer than the whole
        // ingestion on a busy machine: then the split is not measurable
        // and says so, rather than printing a zero for the gateway.
        let own = match hybrid.checked_sub(embedding) {
            Some(own) => format!(
                "the gateway's own {own:?} ({:.2} MiB/s without the model)",
                mib / own.as_secs_f64().max(1e-9)
            ),
            None => "the gateway's own not separable (embedding alone took longer)".to_owned(),
        };
        eprintln!(
            "{backend}: {kib} KiB hybrid ({model}): ingestion {hybrid:?} ({:.3} MiB/s), of which embedding about {embedding:?} ({} chunks), {own}; load {}",
            mib / hybrid.as_secs_f64(),
            chunks.len(),
            load()
        );
    }
}

//! Ingestion of real files into a SQLite vector store, end to end: PDF,
//! HTML, code and Markdown completed and searchable; unsupported and broken
//! files failed with OpenAI's codes; embedding failures and model mismatches
//! failed, never half-indexed; a worker that dies mid-ingestion leaves
//! nothing stuck.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::{hash_vector, pdf, sqlite, upload, vector_store, HashEmbedder, T};
use windlass_engine::{Embedder, FileStore, IngestionJob, NewAttachment, VectorStoreStore};
use windlass_protocol::{
    LastErrorCode, SearchMode, StaticChunking, VectorStoreFileStatus, VectorStoreStatus,
};
use windlass_retrieval::{extract, Ingested, Ingestor, SearchParams, Searcher};

const HTML: &str = "<html><head><title>FAQ</title><style>p{color:red}</style></head><body>\
<h1>Frequently asked</h1><p>The <b>warranty</b> covers <a href='/x'>water damage</a> for two years.</p>\
<script>var hidden = 'do not index';</script></body></html>";

const CODE: &str = "/// Computes the shipping fee in cents.\n\
pub fn shipping_fee(weight_grams: u32) -> u32 {\n    if weight_grams > 5000 { 1250 } else { 495 }\n}\n";

fn attach(file: &str) -> NewAttachment {
    NewAttachment {
        file_id: file.into(),
        attributes: None,
        chunking: StaticChunking::AUTO,
    }
}

async fn status(
    stores: &dyn VectorStoreStore,
    store: &str,
    file: &str,
) -> (VectorStoreFileStatus, Option<(LastErrorCode, String)>) {
    let f = stores
        .get_vector_store_file(T, store, file)
        .await
        .unwrap()
        .unwrap();
    (f.status, f.last_error.map(|e| (e.code, e.message)))
}

fn params(store: &str, q: &str) -> SearchParams {
    SearchParams {
        vector_store_ids: vec![store.into()],
        queries: vec![q.into()],
        filter: None,
        max_num_results: Some(5),
        ranking_options: None,
    }
}

#[test]
fn real_files_give_their_text() {
    let text = extract(
        "manual.pdf",
        &pdf(&[
            "Riverline kayak manual",
            "Replace the rudder cable every two seasons.",
        ]),
    )
    .unwrap();
    assert!(text.contains("Riverline kayak manual"), "{text:?}");
    assert!(text.contains("rudder cable every two seasons"), "{text:?}");
    let text = extract("faq.html", HTML.as_bytes()).unwrap();
    assert!(
        text.contains("warranty") && text.contains("water damage"),
        "{text:?}"
    );
    assert!(
        !text.contains("color:red") && !text.contains("do not index"),
        "{text:?}"
    );
    assert!(extract("fee.rs", CODE.as_bytes())
        .unwrap()
        .contains("fn shipping_fee"));
}

#[test]
fn broken_pdfs_are_invalid_files_not_crashes() {
    let good = pdf(&["some text"]);
    for bad in [
        &good[..good.len() / 2],
        b"%PDF-1.5\n1 0 obj << /Type /Catalog >>",
        b"not a pdf at all",
        &[],
    ] {
        let err = extract("broken.pdf", bad).unwrap_err();
        assert_eq!(err.code(), LastErrorCode::InvalidFile, "{err}");
    }
}

#[tokio::test]
async fn files_are_ingested_searchable_or_failed_with_a_reason() {
    let s = sqlite().await;
    vector_store(&*s, "vs_1", None).await;
    let broken = pdf(&["half"]);
    let files: [(&str, &str, Vec<u8>); 6] = [
        (
            "file-pdf",
            "kayak.pdf",
            pdf(&[
                "Riverline kayak manual",
                "Replace the rudder cable every two seasons.",
            ]),
        ),
        ("file-html", "faq.html", HTML.as_bytes().to_vec()),
        ("file-code", "fee.rs", CODE.as_bytes().to_vec()),
        ("file-exe", "setup.exe", b"MZ\x90\x00".to_vec()),
        (
            "file-broken",
            "broken.pdf",
            broken[..broken.len() / 2].to_vec(),
        ),
        ("file-latin1", "notes.txt", b"caf\xe9".to_vec()),
    ];
    for (id, name, bytes) in &files {
        upload(&*s, id, name, bytes).await;
    }
    let all: Vec<NewAttachment> = files.iter().map(|(id, _, _)| attach(id)).collect();
    s.attach_files(T, "vs_1", &all, None, 1).await.unwrap();
    let ingestor = Ingestor::new(s.clone(), s.clone(), None);
    let done = ingestor.run_pending("w1", 10, 300, 100).await.unwrap();
    assert_eq!(done.len(), 6);
    assert!(matches!(
        done.iter()
            .find(|(j, _)| j.file_id == "file-pdf")
            .unwrap()
            .1,
        Ingested::Completed { chunks: 1 }
    ));

    for id in ["file-pdf", "file-html", "file-code"] {
        assert_eq!(
            status(&*s, "vs_1", id).await.0,
            VectorStoreFileStatus::Completed,
            "{id}"
        );
    }
    let (st, err) = status(&*s, "vs_1", "file-exe").await;
    assert_eq!(
        (st, err.unwrap().0),
        (
            VectorStoreFileStatus::Failed,
            LastErrorCode::UnsupportedFile
        )
    );
    let (st, err) = status(&*s, "vs_1", "file-broken").await;
    let err = err.unwrap();
    assert_eq!(
        (st, err.0),
        (VectorStoreFileStatus::Failed, LastErrorCode::InvalidFile)
    );
    assert!(err.1.contains("PDF"), "{}", err.1);
    assert_eq!(
        status(&*s, "vs_1", "file-latin1").await.1.unwrap().0,
        LastErrorCode::InvalidFile
    );
    assert!(s
        .file_chunks(T, "vs_1", "file-broken")
        .await
        .unwrap()
        .unwrap()
        .is_empty());

    let vs = s.get_vector_store(T, "vs_1").await.unwrap().unwrap();
    assert_eq!(
        (vs.status, vs.file_counts.completed, vs.file_counts.failed),
        (VectorStoreStatus::Completed, 3, 3)
    );
    assert!(vs.usage_bytes > 0);

    let searcher = Searcher::new(s.clone(), None);
    let out = searcher
        .search(
            T,
            &params("vs_1", "how often should the rudder cable be replaced?"),
        )
        .await
        .unwrap();
    assert_eq!(out.mode, SearchMode::Keyword);
    assert_eq!(out.hits[0].file_id, "file-pdf");
    assert_eq!(out.hits[0].filename, "kayak.pdf");
    let out = searcher
        .search(T, &params("vs_1", "Does the warranty cover water damage?"))
        .await
        .unwrap();
    assert_eq!(out.hits[0].file_id, "file-html");
    let out = searcher
        .search(T, &params("vs_1", "shipping_fee weight"))
        .await
        .unwrap();
    assert_eq!(out.hits[0].file_id, "file-code");
}

#[tokio::test]
async fn hybrid_stores_embed_every_chunk_and_search_by_meaning() {
    let s = sqlite().await;
    let embedder = HashEmbedder::new("hash-64");
    vector_store(&*s, "vs_h", Some("hash-64")).await;
    upload(
        &*s,
        "file-1",
        "kayak.md",
        b"Store the kayak upside down, out of the sun.",
    )
    .await;
    upload(
        &*s,
        "file-2",
        "stove.md",
        b"Close the gas valve after cooking.",
    )
    .await;
    s.attach_files(T, "vs_h", &[attach("file-1"), attach("file-2")], None, 1)
        .await
        .unwrap();
    let ingestor = Ingestor::new(
        s.clone(),
        s.clone(),
        Some(embedder.clone() as Arc<dyn Embedder>),
    );
    ingestor.run_pending("w", 10, 300, 10).await.unwrap();
    assert_eq!(
        status(&*s, "vs_h", "file-2").await.0,
        VectorStoreFileStatus::Completed
    );

    let searcher = Searcher::new(s.clone(), Some(embedder.clone() as Arc<dyn Embedder>));
    let out = searcher.search(T, &params("vs_h", "valve")).await.unwrap();
    assert_eq!(out.mode, SearchMode::Hybrid);
    assert_eq!(out.hits[0].file_id, "file-2");
    assert_eq!(out.hits[0].score, 1.0, "first by keyword and by vector");
    // The stored vectors are the embedder's (not recomputed at search).
    assert_eq!(hash_vector("valve").len(), 64);
}

#[tokio::test]
async fn embedding_failures_fail_the_file_whole() {
    let s = sqlite().await;
    vector_store(&*s, "vs_down", Some("hash-64")).await;
    vector_store(&*s, "vs_other", Some("another-model")).await;
    upload(&*s, "file-1", "a.md", b"Some text to embed.").await;
    s.attach_files(T, "vs_down", &[attach("file-1")], None, 1)
        .await
        .unwrap();
    s.attach_files(T, "vs_other", &[attach("file-1")], None, 1)
        .await
        .unwrap();
    let down = Arc::new(HashEmbedder {
        model: "hash-64".into(),
        down: true,
    });
    let ingestor = Ingestor::new(s.clone(), s.clone(), Some(down as Arc<dyn Embedder>));
    ingestor.run_pending("w", 10, 300, 10).await.unwrap();
    let (st, err) = status(&*s, "vs_down", "file-1").await;
    let err = err.unwrap();
    assert_eq!(
        (st, err.0),
        (VectorStoreFileStatus::Failed, LastErrorCode::ServerError)
    );
    assert!(err.1.contains("connection refused"), "{}", err.1);
    assert_eq!(
        s.file_chunks(T, "vs_down", "file-1").await.unwrap(),
        Some(vec![])
    );
    let (st, err) = status(&*s, "vs_other", "file-1").await;
    assert_eq!(st, VectorStoreFileStatus::Failed);
    assert!(err.unwrap().1.contains("'another-model'"));
    // The searcher refuses rather than answering keyword-only in silence.
    let searcher = Searcher::new(
        s.clone(),
        Some(Arc::new(HashEmbedder {
            model: "hash-64".into(),
            down: true,
        }) as Arc<dyn Embedder>),
    );
    assert!(matches!(
        searcher.search(T, &params("vs_down", "text")).await,
        Err(windlass_retrieval::SearchError::Embedding(_))
    ));
}

#[tokio::test]
async fn a_dead_worker_leaves_nothing_stuck() {
    let s = sqlite().await;
    vector_store(&*s, "vs_1", None).await;
    for i in 0..3 {
        upload(
            &*s,
            &format!("file-{i}"),
            &format!("f{i}.md"),
            format!("document number {i}").as_bytes(),
        )
        .await;
    }
    let all: Vec<NewAttachment> = (0..3).map(|i| attach(&format!("file-{i}"))).collect();
    s.attach_files(T, "vs_1", &all, None, 1).await.unwrap();
    // A process claims two files and dies before writing anything.
    let lost: Vec<IngestionJob> = s
        .claim_ingestions("dead-process", 100, 60, 2)
        .await
        .unwrap();
    assert_eq!(lost.len(), 2);
    // The next process at start: only the unclaimed file now ...
    let ingestor = Ingestor::new(s.clone(), s.clone(), None);
    assert_eq!(
        ingestor
            .run_pending("restarted", 110, 60, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    // ... and the dead one's files once its lease ended.
    assert_eq!(
        ingestor
            .run_pending("restarted", 161, 60, 10)
            .await
            .unwrap()
            .len(),
        2
    );
    for i in 0..3 {
        assert_eq!(
            status(&*s, "vs_1", &format!("file-{i}")).await.0,
            VectorStoreFileStatus::Completed
        );
    }
    assert!(ingestor
        .run_pending("restarted", 999, 60, 10)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn deleting_a_file_mid_ingestion_writes_nothing() {
    let s = sqlite().await;
    vector_store(&*s, "vs_1", None).await;
    upload(&*s, "file-1", "a.md", b"text").await;
    s.attach_files(T, "vs_1", &[attach("file-1")], None, 1)
        .await
        .unwrap();
    let jobs = s.claim_ingestions("w", 10, 60, 10).await.unwrap();
    assert!(s.delete_file(T, "file-1").await.unwrap());
    let ingestor = Ingestor::new(s.clone(), s.clone(), None);
    assert_eq!(ingestor.ingest(&jobs[0]).await.unwrap(), Ingested::Dropped);
    assert!(s.get_file(T, "file-1").await.unwrap().is_none());
}

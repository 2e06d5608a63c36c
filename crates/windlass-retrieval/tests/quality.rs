//! Retrieval against real components: the real embedding model
//! (all-MiniLM-L6-v2, started by `scripts/embed-server.sh`, which sets
//! `WINDLASS_TEST_EMBED`) through the embeddings client, and recall@5 on
//! the fixed corpus of `tests/retrieval/` (34 questions whose answer chunk
//! is known), keyword-only always, hybrid with the real model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{sqlite, upload, vector_store, T};
use serde_json::Value;
use windlass_engine::{Embedder, NewAttachment, VectorStoreStore};
use windlass_protocol::{SearchMode, StaticChunking};
use windlass_providers::{ChatProviderConfig, EmbeddingsClient};
use windlass_retrieval::{Ingestor, SearchParams, Searcher};
use windlass_store::SqliteStore;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/retrieval")
}

/// The real model's client, when the test script started it.
fn real_embedder() -> Option<Arc<dyn Embedder>> {
    let Ok(url) = std::env::var("WINDLASS_TEST_EMBED") else {
        eprintln!("WINDLASS_TEST_EMBED is not set: skipping (scripts/embed-server.sh sets it)");
        return None;
    };
    let model =
        std::env::var("WINDLASS_TEST_EMBED_MODEL").unwrap_or_else(|_| "all-minilm-l6-v2".into());
    Some(Arc::new(
        EmbeddingsClient::new(ChatProviderConfig::new(url), model).expect("client"),
    ))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (n(a) * n(b))
}

#[tokio::test]
async fn the_real_model_embeds_by_meaning() {
    let Some(e) = real_embedder() else { return };
    let texts: Vec<String> = [
        "How do I get my money back?",
        "Refunds are paid to the original payment method.",
        "Pitch the tent on flat ground cleared of stones.",
    ]
    .map(String::from)
    .to_vec();
    let v = e.embed(&texts).await.expect("embed");
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(|x| x.len() == 384));
    assert!(
        v.iter()
            .all(|x| (x.iter().map(|f| f * f).sum::<f32>() - 1.0).abs() < 1e-3),
        "normalised"
    );
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.1);
}

struct Question {
    q: String,
    file: String,
    answer: String,
}

/// The corpus ingested into one store (`model`: hybrid) of a fresh database.
async fn corpus_store(embedder: Option<Arc<dyn Embedder>>) -> (Arc<SqliteStore>, Vec<Question>) {
    let dir = fixture();
    let spec: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("questions.json")).unwrap())
            .unwrap();
    let sizes: StaticChunking = serde_json::from_value(spec["chunking"].clone()).unwrap();
    let s = sqlite().await;
    vector_store(&*s, "vs_corpus", embedder.as_ref().map(|e| e.model())).await;
    let mut names: Vec<String> = std::fs::read_dir(dir.join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut attach = Vec::new();
    for name in &names {
        let bytes = std::fs::read(dir.join("corpus").join(name)).unwrap();
        let id = format!("file-{name}");
        upload(&*s, &id, name, &bytes).await;
        attach.push(NewAttachment {
            file_id: id,
            attributes: None,
            chunking: sizes,
        });
    }
    s.attach_files(T, "vs_corpus", &attach, None, 1)
        .await
        .unwrap();
    let done = Ingestor::new(s.clone(), s.clone(), embedder)
        .run_pending("w", 10, 600, 100)
        .await
        .unwrap();
    assert_eq!(done.len(), names.len());
    let questions = spec["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| Question {
            q: q["q"].as_str().unwrap().into(),
            file: format!("file-{}", q["file"].as_str().unwrap()),
            answer: q["answer"].as_str().unwrap().into(),
        })
        .collect();
    (s, questions)
}

/// The share of questions whose answer chunk is among the first five hits
/// (and, printed, among the first one).
async fn recall_at_5(
    s: Arc<SqliteStore>,
    embedder: Option<Arc<dyn Embedder>>,
    questions: &[Question],
) -> (f64, SearchMode) {
    let searcher = Searcher::new(s, embedder);
    let (mut found, mut first) = (0, 0);
    let mut mode = SearchMode::Keyword;
    for q in questions {
        let params = SearchParams {
            vector_store_ids: vec!["vs_corpus".into()],
            queries: vec![q.q.clone()],
            filter: None,
            max_num_results: Some(5),
            ranking_options: None,
        };
        let out = searcher.search(T, &params).await.unwrap();
        mode = out.mode;
        let rank = out
            .hits
            .iter()
            .position(|h| h.file_id == q.file && h.text.contains(&q.answer));
        found += usize::from(rank.is_some());
        first += usize::from(rank == Some(0));
    }
    let n = questions.len() as f64;
    eprintln!(
        "{mode:?}: recall@1 {:.3}, recall@5 {:.3}",
        first as f64 / n,
        found as f64 / n
    );
    (found as f64 / n, mode)
}

#[tokio::test]
async fn recall_at_5_keyword_and_hybrid() {
    let (s, questions) = corpus_store(None).await;
    assert!(questions.len() >= 30);
    let chunks: usize = {
        let mut n = 0;
        for f in std::fs::read_dir(fixture().join("corpus")).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            n += s
                .file_chunks(T, "vs_corpus", &format!("file-{name}"))
                .await
                .unwrap()
                .unwrap()
                .len();
        }
        n
    };
    let (keyword, mode) = recall_at_5(s, None, &questions).await;
    assert_eq!(mode, SearchMode::Keyword);
    eprintln!(
        "recall@5 keyword-only: {keyword:.3} ({} questions, {chunks} chunks)",
        questions.len()
    );
    // Paraphrased questions: keywords alone find well under all of them.
    assert!(keyword >= 0.4, "keyword recall@5 {keyword}");

    let Some(e) = real_embedder() else { return };
    let (s, questions) = corpus_store(Some(e.clone())).await;
    let (hybrid, mode) = recall_at_5(s, Some(e), &questions).await;
    assert_eq!(mode, SearchMode::Hybrid);
    eprintln!("recall@5 hybrid (all-MiniLM-L6-v2): {hybrid:.3}");
    assert!(
        hybrid >= keyword,
        "hybrid {hybrid} below keyword-only {keyword}"
    );
}

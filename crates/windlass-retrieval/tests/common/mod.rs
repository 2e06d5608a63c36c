//! Fixtures of the retrieval tests: real files (a PDF written with lopdf,
//! HTML, code), a SQLite store, and a small deterministic embedder.

#![allow(dead_code)] // each test binary uses a different subset

use std::sync::Arc;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use windlass_engine::{Embedder, FileStore, NewVectorStore, ProviderError, VectorStoreStore};
use windlass_protocol::{FileObject, FilePurpose, VectorStore};
use windlass_store::SqliteStore;

pub(crate) const T: &str = "tenant-a";

/// A one-page PDF whose text is `lines`, in the standard Helvetica font.
pub(crate) fn pdf(lines: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let mut operations = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 12.into()]),
        Operation::new("Td", vec![72.into(), 760.into()]),
        Operation::new("TL", vec![16.into()]),
    ];
    for line in lines {
        operations.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
        operations.push(Operation::new("T*", vec![]));
    }
    operations.push(Operation::new("ET", vec![]));
    let content = Content { operations }.encode().expect("content");
    let content_id = doc.add_object(Stream::new(dictionary! {}, content));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    doc.compress();
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save pdf");
    out
}

pub(crate) async fn sqlite() -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open_in_memory().await.expect("sqlite"))
}

pub(crate) async fn upload(files: &dyn FileStore, id: &str, name: &str, bytes: &[u8]) {
    let file = FileObject::new(
        id.into(),
        name.into(),
        bytes.len() as u64,
        FilePurpose::Assistants,
        1,
    );
    files.create_file(T, &file, bytes).await.expect("upload");
}

pub(crate) async fn vector_store(
    stores: &dyn VectorStoreStore,
    id: &str,
    model: Option<&str>,
) -> VectorStore {
    let new = NewVectorStore {
        id: id.into(),
        name: id.into(),
        description: None,
        created_at: 1,
        metadata: Default::default(),
        expires_after: None,
        embedding_model: model.map(str::to_owned),
    };
    stores.create_vector_store(T, &new).await.expect("store")
}

/// Feature hashing of words into 64 dimensions: texts sharing words point
/// the same way. Deterministic, so ingestion's mechanics can be tested
/// without a model server (the real model has its own test).
pub(crate) struct HashEmbedder {
    pub model: String,
    /// Fail every call (an embedding upstream that is down).
    pub down: bool,
}

impl HashEmbedder {
    pub(crate) fn new(model: &str) -> Arc<HashEmbedder> {
        Arc::new(HashEmbedder {
            model: model.into(),
            down: false,
        })
    }
}

pub(crate) fn hash_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 64];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
    {
        let h = word.to_lowercase().bytes().fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        });
        v[(h % 64) as usize] += 1.0;
    }
    v
}

#[async_trait::async_trait]
impl Embedder for HashEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        if self.down {
            return Err(ProviderError::Connect("connection refused".into()));
        }
        Ok(texts.iter().map(|t| hash_vector(t)).collect())
    }
}

//! The Vector stores API (`/v1/vector_stores`): stores, their files, file
//! batches, chunking strategies and search, in OpenAI's shapes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::file_search::{Attributes, Filter, RankingOptions};

/// `object` of a vector store.
pub const OBJECT_VECTOR_STORE: &str = "vector_store";
/// `object` of a deleted vector store's answer.
pub const OBJECT_VECTOR_STORE_DELETED: &str = "vector_store.deleted";
/// `object` of a vector store file.
pub const OBJECT_VECTOR_STORE_FILE: &str = "vector_store.file";
/// `object` of a deleted vector store file's answer.
pub const OBJECT_VECTOR_STORE_FILE_DELETED: &str = "vector_store.file.deleted";
/// `object` of a file batch.
pub const OBJECT_FILE_BATCH: &str = "vector_store.files_batch";
/// `object` of a search results page.
pub const OBJECT_SEARCH_PAGE: &str = "vector_store.search_results.page";
/// `object` of a file content page.
pub const OBJECT_FILE_CONTENT_PAGE: &str = "vector_store.file_content.page";

/// `chunking_strategy: auto`: OpenAI's documented defaults.
pub const AUTO_MAX_CHUNK_TOKENS: u32 = 800;
/// See [`AUTO_MAX_CHUNK_TOKENS`].
pub const AUTO_CHUNK_OVERLAP_TOKENS: u32 = 400;
/// Bounds of `static.max_chunk_size_tokens`.
pub const MIN_CHUNK_TOKENS: u32 = 100;
/// See [`MIN_CHUNK_TOKENS`].
pub const MAX_CHUNK_TOKENS: u32 = 4096;
/// Bounds of `max_num_results`.
pub const MAX_NUM_RESULTS: u32 = 50;
/// `max_num_results` when the request leaves it out.
pub const DEFAULT_NUM_RESULTS: u32 = 10;

/// A vector store (`object: "vector_store"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct VectorStore {
    pub id: String,
    pub object: String,
    pub created_at: u64,
    pub name: String,
    /// As given at creation (or by a modify); absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Bytes of the extracted text of its completed files.
    pub usage_bytes: u64,
    pub file_counts: FileCounts,
    pub status: VectorStoreStatus,
    #[serde(default)]
    pub expires_after: Option<ExpiresAfter>,
    #[serde(default)]
    pub expires_at: Option<u64>,
    #[serde(default)]
    pub last_active_at: Option<u64>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub metadata: Map<String, Value>,
    /// Windlass extension: `hybrid` (keyword and embeddings) or `keyword`
    /// (no embedding model was configured when the store was created).
    #[serde(default)]
    pub search_mode: SearchMode,
    /// Windlass extension: the embedding model of a hybrid store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_model: Option<String>,
}

/// How a store's chunks are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Keyword ranking fused with embedding similarity.
    Hybrid,
    /// Keyword ranking only: no embeddings.
    #[default]
    Keyword,
}

/// A vector store's or batch's `file_counts`, by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileCounts {
    pub in_progress: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub total: u64,
}

/// A vector store's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Vector stores API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum VectorStoreStatus {
    Expired,
    InProgress,
    Completed,
}

/// `{"anchor": "last_active_at", "days": N}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct ExpiresAfter {
    pub anchor: ExpiresAnchor,
    pub days: u32,
}

/// What a store's expiry counts from: only `last_active_at` exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Vector stores API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum ExpiresAnchor {
    LastActiveAt,
}

/// `POST /v1/vector_stores`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct CreateVectorStoreRequest {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub file_ids: Option<Vec<String>>,
    #[serde(default)]
    pub chunking_strategy: Option<ChunkingStrategy>,
    #[serde(default)]
    pub expires_after: Option<ExpiresAfter>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `POST /v1/vector_stores/{id}`: fields present are replaced; an explicit
/// `null` `expires_after` removes the policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct UpdateVectorStoreRequest {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "explicit")]
    pub expires_after: Option<Option<ExpiresAfter>>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `metadata: null` (OpenAI's objects may carry it) as an empty map.
fn null_as_empty<'de, D>(d: D) -> Result<Map<String, Value>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<Map<String, Value>>::deserialize(d).map(Option::unwrap_or_default)
}

/// `Some(None)` for an explicit `null`, `None` (by `default`) when absent.
fn explicit<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// How a file is cut into chunks. `auto` is what a request may send and is
/// stored resolved to `static` 800/400; `other` marks files indexed without
/// a known strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Vector stores API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum ChunkingStrategy {
    Auto,
    Static {
        #[serde(rename = "static")]
        config: StaticChunking,
    },
    Other,
}

/// `chunking_strategy.static`: chunk size and overlap, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct StaticChunking {
    pub max_chunk_size_tokens: u32,
    pub chunk_overlap_tokens: u32,
}

impl StaticChunking {
    /// The sizes `auto` uses.
    pub const AUTO: StaticChunking = StaticChunking {
        max_chunk_size_tokens: AUTO_MAX_CHUNK_TOKENS,
        chunk_overlap_tokens: AUTO_CHUNK_OVERLAP_TOKENS,
    };

    /// OpenAI's bounds: 100..=4096 tokens, overlap at most half.
    pub fn check(&self) -> Result<(), String> {
        let max = self.max_chunk_size_tokens;
        if !(MIN_CHUNK_TOKENS..=MAX_CHUNK_TOKENS).contains(&max) {
            return Err(format!(
                "max_chunk_size_tokens must be between {MIN_CHUNK_TOKENS} and {MAX_CHUNK_TOKENS}"
            ));
        }
        if self.chunk_overlap_tokens > max / 2 {
            return Err(
                "chunk_overlap_tokens must not exceed half of max_chunk_size_tokens".to_owned(),
            );
        }
        Ok(())
    }
}

impl ChunkingStrategy {
    /// The sizes to chunk with (`auto` and `other` mean the defaults).
    pub fn resolve(&self) -> StaticChunking {
        match self {
            ChunkingStrategy::Static { config } => *config,
            ChunkingStrategy::Auto | ChunkingStrategy::Other => StaticChunking::AUTO,
        }
    }

    /// The strategy as a file object reports it: always `static`.
    pub fn resolved(&self) -> ChunkingStrategy {
        ChunkingStrategy::Static {
            config: self.resolve(),
        }
    }

    /// Refuses a strategy a client may not request, or out-of-bounds sizes.
    pub fn check(&self) -> Result<(), String> {
        match self {
            ChunkingStrategy::Static { config } => config.check(),
            ChunkingStrategy::Auto => Ok(()),
            ChunkingStrategy::Other => Err("chunking_strategy 'other' cannot be requested".into()),
        }
    }
}

/// A file attached to a vector store (`object: "vector_store.file"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct VectorStoreFile {
    /// The file's id.
    pub id: String,
    pub object: String,
    pub created_at: u64,
    pub vector_store_id: String,
    pub status: VectorStoreFileStatus,
    pub usage_bytes: u64,
    #[serde(default)]
    pub last_error: Option<LastError>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    #[serde(default)]
    pub chunking_strategy: Option<ChunkingStrategy>,
}

/// A vector store file's ingestion status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Vector stores API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum VectorStoreFileStatus {
    InProgress,
    Completed,
    Cancelled,
    Failed,
}

impl VectorStoreFileStatus {
    /// The status's wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorStoreFileStatus::InProgress => "in_progress",
            VectorStoreFileStatus::Completed => "completed",
            VectorStoreFileStatus::Cancelled => "cancelled",
            VectorStoreFileStatus::Failed => "failed",
        }
    }

    /// The status a wire spelling names, if any.
    pub fn parse(s: &str) -> Option<VectorStoreFileStatus> {
        serde_json::from_value(Value::String(s.to_owned())).ok()
    }
}

/// Why ingesting a file failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct LastError {
    pub code: LastErrorCode,
    pub message: String,
}

/// `last_error.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Vector stores API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum LastErrorCode {
    ServerError,
    UnsupportedFile,
    InvalidFile,
}

/// `POST /v1/vector_stores/{id}/files`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct CreateVectorStoreFileRequest {
    pub file_id: String,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    #[serde(default)]
    pub chunking_strategy: Option<ChunkingStrategy>,
}

/// `POST /v1/vector_stores/{id}/files/{file_id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct UpdateVectorStoreFileRequest {
    pub attributes: Option<Attributes>,
}

/// `POST /v1/vector_stores/{id}/file_batches`: `file_ids` with shared
/// settings, or `files` each with its own (mutually exclusive).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct CreateFileBatchRequest {
    #[serde(default)]
    pub file_ids: Option<Vec<String>>,
    #[serde(default)]
    pub files: Option<Vec<CreateVectorStoreFileRequest>>,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    #[serde(default)]
    pub chunking_strategy: Option<ChunkingStrategy>,
}

impl CreateFileBatchRequest {
    /// The batch as one attachment request per file, or why it is refused.
    pub fn into_files(self) -> Result<Vec<CreateVectorStoreFileRequest>, String> {
        match (self.file_ids, self.files) {
            (Some(_), Some(_)) => Err("`file_ids` and `files` are mutually exclusive".into()),
            (Some(ids), None) => Ok(ids
                .into_iter()
                .map(|file_id| CreateVectorStoreFileRequest {
                    file_id,
                    attributes: self.attributes.clone(),
                    chunking_strategy: self.chunking_strategy.clone(),
                })
                .collect()),
            (None, Some(files)) => Ok(files),
            (None, None) => Err("one of `file_ids` or `files` is required".into()),
        }
    }
}

/// A batch of files attached together (`object: "vector_store.files_batch"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct VectorStoreFileBatch {
    pub id: String,
    pub object: String,
    pub created_at: u64,
    pub vector_store_id: String,
    pub status: VectorStoreFileStatus,
    pub file_counts: FileCounts,
}

/// `POST /v1/vector_stores/{id}/search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct SearchRequest {
    pub query: SearchQueryText,
    #[serde(default)]
    pub filters: Option<Filter>,
    #[serde(default)]
    pub max_num_results: Option<u32>,
    #[serde(default)]
    pub ranking_options: Option<RankingOptions>,
    /// `true` is refused (400): no model rewrites queries here; `false` or
    /// absent searches the queries as given.
    #[serde(default)]
    pub rewrite_query: Option<bool>,
}

/// A search's `query`: one string or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SearchQueryText {
    /// One query.
    One(String),
    /// Several queries, searched together.
    Many(Vec<String>),
}

impl SearchQueryText {
    /// The queries, one or many, as a list.
    pub fn queries(&self) -> Vec<String> {
        match self {
            SearchQueryText::One(q) => vec![q.clone()],
            SearchQueryText::Many(qs) => qs.clone(),
        }
    }
}

/// The answer to a search (`object: "vector_store.search_results.page"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct SearchResultsPage {
    pub object: String,
    pub search_query: Vec<String>,
    pub data: Vec<SearchResult>,
    pub has_more: bool,
    pub next_page: Option<String>,
}

/// One search hit: a chunk of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct SearchResult {
    pub file_id: String,
    pub filename: String,
    pub score: f64,
    #[serde(default)]
    pub attributes: Option<Attributes>,
    pub content: Vec<TextContent>,
}

/// `{"type": "text", "text": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct TextContent {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: String,
}

impl TextContent {
    /// A `text` chunk.
    pub fn new(text: impl Into<String>) -> TextContent {
        TextContent {
            kind: "text".to_owned(),
            text: text.into(),
        }
    }
}

/// `GET /v1/vector_stores/{id}/files/{file_id}/content`: the file's chunks
/// in order (`object: "vector_store.file_content.page"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Vector stores API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileContentPage {
    pub object: String,
    pub data: Vec<TextContent>,
    pub has_more: bool,
    pub next_page: Option<String>,
}

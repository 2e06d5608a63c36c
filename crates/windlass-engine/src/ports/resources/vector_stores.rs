//! The vector store port: stores, the files attached to them (status,
//! attributes, usage), their chunks, file batches, background ingestion and
//! search. Used by the Vector stores API and by the `file_search` tool.
//!
//! Every method takes the owner tenant first (ingestion jobs carry theirs);
//! another tenant's store behaves exactly like an unknown id. Every change
//! of several rows is one transaction: a file is never half-indexed.

use serde_json::{Map, Value};
use windlass_protocol::{
    Attributes, ExpiresAfter, Filter, HybridSearch, LastError, SearchMode, StaticChunking,
    VectorStore, VectorStoreFile, VectorStoreFileBatch, VectorStoreFileStatus,
};

use super::files::{ListRequest, Page};
use crate::ports::agent::store::StoreError;

/// A store to create (`status`, counts and usage start empty).
#[derive(Debug, Clone, PartialEq)]
pub struct NewVectorStore {
    /// The store's id (`vs_...`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// Unix seconds.
    pub created_at: u64,
    /// The client's key-value metadata.
    pub metadata: Map<String, Value>,
    /// When it expires after its last activity, if ever.
    pub expires_after: Option<ExpiresAfter>,
    /// The embedding model the store's chunks are embedded with; `None`
    /// makes a keyword-only store.
    pub embedding_model: Option<String>,
}

/// `POST /v1/vector_stores/{id}`: present fields replace the stored ones
/// (`expires_after: Some(None)` removes the policy).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VectorStoreUpdate {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new expiry policy (`Some(None)` removes it).
    pub expires_after: Option<Option<ExpiresAfter>>,
    /// New metadata, replacing the old.
    pub metadata: Option<Map<String, Value>>,
}

/// A file to attach; it starts `in_progress`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAttachment {
    /// The uploaded file to attach.
    pub file_id: String,
    /// Its attributes, for search filters.
    pub attributes: Option<Attributes>,
    /// How its text is cut into chunks.
    pub chunking: StaticChunking,
}

/// A file batch to record with the files it attaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBatch {
    /// The batch's id.
    pub id: String,
    /// Unix seconds.
    pub created_at: u64,
}

/// The outcome of attaching files: all of them, or none and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Attached<T> {
    /// Every file was attached.
    Done(T),
    /// The store is unknown (or another tenant's).
    UnknownStore,
    /// The store has expired (`expires_after`): nothing is attached to it.
    Expired,
    /// This file id is not one of the tenant's files.
    UnknownFile(String),
}

/// Which attached files to list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileFilter {
    /// Only files with this status, when set.
    pub status: Option<VectorStoreFileStatus>,
    /// Only the files of this batch.
    pub batch_id: Option<String>,
}

/// An attached file waiting to be ingested, claimed by one worker.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestionJob {
    /// The tenant that owns the store.
    pub tenant: String,
    /// The store the file is attached to.
    pub vector_store_id: String,
    /// The uploaded file.
    pub file_id: String,
    /// The file's name, for its chunks' hits.
    pub filename: String,
    /// How its text is cut into chunks.
    pub chunking: StaticChunking,
    /// The store's embedding model (`None`: keyword-only).
    pub embedding_model: Option<String>,
}

/// One chunk of an ingested file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChunk {
    /// The chunk's text.
    pub text: String,
    /// Its length in tokens.
    pub tokens: u32,
    /// Present exactly when the store has an embedding model.
    pub embedding: Option<Vec<f32>>,
}

/// How ingesting a file ended.
#[derive(Debug, Clone, PartialEq)]
pub enum IngestionOutcome {
    /// The file was read and cut into chunks.
    Completed {
        /// The chunks, in file order.
        chunks: Vec<NewChunk>,
        /// Bytes of the extracted text.
        usage_bytes: u64,
    },
    /// The file could not be ingested, and why.
    Failed(LastError),
}

/// A search over the chunks of some of a tenant's stores.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkQuery {
    /// The stores searched (the tenant's only).
    pub vector_store_ids: Vec<String>,
    /// Natural language; its words are OR'd for the keyword ranking, and
    /// no character is syntax.
    pub text: String,
    /// The query's embedding; compared only with chunks embedded by the
    /// same model.
    pub embedding: Option<QueryEmbedding>,
    /// On the attributes of each store's files.
    pub filter: Option<Filter>,
    /// Most hits returned.
    pub limit: usize,
    /// Hits scoring below are dropped.
    pub score_threshold: Option<f64>,
    /// Weights of the keyword and embedding rankings (default equal).
    pub weights: Option<HybridSearch>,
    /// The moment (Unix seconds) expiry is judged at: a store whose
    /// `expires_after` has run out by then is not searched, whether or not
    /// the sweep has marked it yet.
    pub now: u64,
}

/// A query's embedding, with the model that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryEmbedding {
    /// The embedding model's id.
    pub model: String,
    /// The vector.
    pub vector: Vec<f32>,
}

/// One chunk found.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkHit {
    /// The store the chunk belongs to.
    pub vector_store_id: String,
    /// The file it was cut from.
    pub file_id: String,
    /// That file's name.
    pub filename: String,
    /// The chunk's position in its file.
    pub chunk_index: u32,
    /// The chunk's text.
    pub text: String,
    /// 0..=1, see `windlass_store`'s fusion: 1 is first in every ranking used.
    pub score: f64,
    /// The file's attributes.
    pub attributes: Attributes,
}

/// What a search found, and how it ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// Best first, at most `limit`.
    pub hits: Vec<ChunkHit>,
    /// `Hybrid` when an embedding ranking took part, `Keyword` otherwise.
    pub mode: SearchMode,
}

/// What a search found, or why it searched nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Searched {
    /// The search ran: its hits, best first.
    Done(SearchOutcome),
    /// One of the stores is unknown to the tenant (another tenant's too).
    UnknownStore,
    /// This store (the first of the query's, by id, that is) has expired at
    /// the query's `now`: none of the stores was searched.
    Expired(String),
}

impl Searched {
    /// The outcome when the search ran.
    pub fn found(self) -> Option<SearchOutcome> {
        match self {
            Searched::Done(outcome) => Some(outcome),
            Searched::UnknownStore | Searched::Expired(_) => None,
        }
    }
}

/// A store the expiry sweep found expired (and emptied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredVectorStore {
    /// The tenant that owned it.
    pub tenant: String,
    /// The store's id.
    pub id: String,
}

/// Vector stores, their files, chunks, batches, ingestion and search, per tenant (see the module doc).
#[async_trait::async_trait]
pub trait VectorStoreStore: Send + Sync {
    /// Creates a store; it starts empty.
    async fn create_vector_store(
        &self,
        tenant: &str,
        new: &NewVectorStore,
    ) -> Result<VectorStore, StoreError>;

    /// The store; `None` when unknown (or another tenant's).
    async fn get_vector_store(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<VectorStore>, StoreError>;

    /// A page of the tenant's stores.
    async fn list_vector_stores(
        &self,
        tenant: &str,
        page: &ListRequest,
    ) -> Result<Page<VectorStore>, StoreError>;

    /// Applies `update`; `None` when the store is unknown.
    async fn update_vector_store(
        &self,
        tenant: &str,
        id: &str,
        update: &VectorStoreUpdate,
    ) -> Result<Option<VectorStore>, StoreError>;

    /// Deletes the store, its attachments, batches and chunks (the files
    /// stay). False when unknown.
    async fn delete_vector_store(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;

    /// Records use (`last_active_at`, which anchors expiry) of these stores;
    /// an expired store stays expired.
    async fn touch_vector_stores(
        &self,
        tenant: &str,
        ids: &[String],
        now: u64,
    ) -> Result<(), StoreError>;

    /// Attaches files (`in_progress`), all or none. A file already attached
    /// keeps its state unless it `failed` or was `cancelled`: then it is
    /// attached anew. With `batch`, the batch is recorded and the files
    /// belong to it.
    async fn attach_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        files: &[NewAttachment],
        batch: Option<&NewBatch>,
        now: u64,
    ) -> Result<Attached<Vec<VectorStoreFile>>, StoreError>;

    /// One attached file; `None` when either is unknown.
    async fn get_vector_store_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<VectorStoreFile>, StoreError>;

    /// `None` when the store is unknown.
    async fn list_vector_store_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        filter: &FileFilter,
        page: &ListRequest,
    ) -> Result<Option<Page<VectorStoreFile>>, StoreError>;

    /// Replaces a file's attributes; `None` when either is unknown.
    async fn update_file_attributes(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
        attributes: Option<&Attributes>,
    ) -> Result<Option<VectorStoreFile>, StoreError>;

    /// Detaches the file and deletes its chunks in this store.
    async fn detach_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError>;

    /// The file's chunks in this store, in order (empty until completed).
    async fn file_chunks(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<String>>, StoreError>;

    /// One file batch; `None` when either is unknown.
    async fn get_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError>;

    /// Cancels the batch: its files still `in_progress` become `cancelled`.
    async fn cancel_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError>;

    /// Claims up to `limit` files `in_progress` (of every tenant) that no
    /// worker holds, or whose holder's lease ended before `now`, for
    /// `worker` until `now + lease_secs`. A process that died mid-ingestion
    /// leaves files a later claim picks up: none stays stuck.
    async fn claim_ingestions(
        &self,
        worker: &str,
        now: u64,
        lease_secs: u64,
        limit: usize,
    ) -> Result<Vec<IngestionJob>, StoreError>;

    /// Extends every lease `worker` holds to `until` (a long file).
    async fn renew_ingestion_claims(&self, worker: &str, until: u64) -> Result<(), StoreError>;

    /// Writes the outcome in one transaction: all chunks and `completed`
    /// with the usage, or `failed` with the error. False (nothing written)
    /// when the file is no longer `in_progress` (cancelled, detached,
    /// deleted).
    async fn finish_ingestion(
        &self,
        job: &IngestionJob,
        outcome: &IngestionOutcome,
    ) -> Result<bool, StoreError>;

    /// The expiry sweep, across every tenant: each store whose
    /// `expires_after` has passed at `now` (and that is not yet marked) is
    /// marked expired for good, its files still `in_progress` become
    /// `cancelled`, and its chunks are deleted (usage goes to 0); the store
    /// and its file list stay, as OpenAI keeps an expired store. One
    /// transaction; with several replicas each store is expired by exactly
    /// one sweep. Returns the stores expired by this call.
    async fn expire_vector_stores(&self, now: u64) -> Result<Vec<ExpiredVectorStore>, StoreError>;

    /// Searches the stores' chunks, or nothing when one store is unknown or
    /// has expired at `query.now` (checked in the same read as the search).
    async fn search(&self, tenant: &str, query: &ChunkQuery) -> Result<Searched, StoreError>;
}

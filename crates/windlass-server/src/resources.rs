//! The resources served beside responses: uploaded files, vector stores,
//! containers and the embeddings route, with their settings. The binary
//! builds one [`Resources`] from the store it opened and hands it to
//! [`AppState::with_resources`](crate::AppState::with_resources); without
//! it those routes answer 404 like any unknown path's resource.
//!
//! Also the small pieces the resource routes share (list queries, the
//! clock, store-error mapping), so no route file uses another.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use tokio::sync::Notify;
use windlass_engine::{
    ContainerStore, Embedder, FileStore, ListRequest, ProviderError, SortOrder, VectorStoreStore,
};
use windlass_protocol::{EmbeddingRequest, EmbeddingResponse};
use windlass_retrieval::{Ingestor, Searcher};

use crate::error::ApiError;

/// Default `[files] max_bytes`: OpenAI's own per-file limit.
pub const DEFAULT_FILE_MAX_BYTES: u64 = 512 * 1024 * 1024;

/// Where `/v1/embeddings` sends a request: the upstream the model routes to
/// (the binary implements it over its upstream table). An unknown model is
/// [`ProviderError::Unsupported`] with `param: "model"`.
#[async_trait::async_trait]
pub trait EmbeddingsUpstreams: Send + Sync {
    async fn create(&self, request: EmbeddingRequest) -> Result<EmbeddingResponse, ProviderError>;
}

/// The background ingestion worker's settings (`[retrieval]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestConfig {
    /// Files ingested at once by this process.
    pub concurrency: usize,
    /// How long a claim on a file lasts without renewal: a process that
    /// died mid-file leaves it to the next claim this long after.
    pub lease: Duration,
    /// How often pending files are looked for when nothing woke the worker
    /// (files attached on another replica).
    pub poll: Duration,
    /// How long a draining worker waits for files in progress before it
    /// stops them and releases their claims.
    pub drain: Duration,
    /// How often expired containers and vector stores are swept.
    pub expiry_sweep: Duration,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            concurrency: 2,
            lease: Duration::from_secs(60),
            poll: Duration::from_secs(5),
            drain: Duration::from_secs(10),
            expiry_sweep: Duration::from_secs(60),
        }
    }
}

/// The resource stores and services.
pub struct Resources {
    pub files: Arc<dyn FileStore>,
    pub vector_stores: Arc<dyn VectorStoreStore>,
    pub containers: Arc<dyn ContainerStore>,
    /// The retrieval embedding model (`[retrieval] embedding_model`);
    /// `None`: vector stores are keyword-only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// `POST /v1/embeddings`; `None`: that route answers 404.
    pub embeddings: Option<Arc<dyn EmbeddingsUpstreams>>,
    /// Largest uploaded file (`[files] max_bytes`).
    pub file_max_bytes: u64,
    pub ingest: IngestConfig,
    /// Wakes the ingestion worker when files are attached here.
    pub(crate) attached: Notify,
}

impl Resources {
    pub fn new(
        files: Arc<dyn FileStore>,
        vector_stores: Arc<dyn VectorStoreStore>,
        containers: Arc<dyn ContainerStore>,
    ) -> Resources {
        Resources {
            files,
            vector_stores,
            containers,
            embedder: None,
            embeddings: None,
            file_max_bytes: DEFAULT_FILE_MAX_BYTES,
            ingest: IngestConfig::default(),
            attached: Notify::new(),
        }
    }

    pub fn with_embedder(mut self, embedder: Option<Arc<dyn Embedder>>) -> Self {
        self.embedder = embedder;
        self
    }

    pub fn with_embeddings(mut self, upstreams: Option<Arc<dyn EmbeddingsUpstreams>>) -> Self {
        self.embeddings = upstreams;
        self
    }

    pub fn with_file_max_bytes(mut self, max: u64) -> Self {
        self.file_max_bytes = max.max(1);
        self
    }

    pub fn with_ingest(mut self, ingest: IngestConfig) -> Self {
        self.ingest = ingest;
        self
    }

    /// Searches vector stores with this process's embedding model.
    pub fn searcher(&self) -> Searcher {
        Searcher::new(self.vector_stores.clone(), self.embedder.clone())
    }

    pub fn ingestor(&self) -> Ingestor {
        Ingestor::new(
            self.files.clone(),
            self.vector_stores.clone(),
            self.embedder.clone(),
        )
    }

    /// The embedding model new vector stores are created with.
    pub fn embedding_model(&self) -> Option<String> {
        self.embedder.as_ref().map(|e| e.model().to_owned())
    }

    /// Files were attached: ingest them now rather than at the next poll.
    pub(crate) fn wake_ingestion(&self) {
        self.attached.notify_one();
    }
}

/// An expired vector store (`expires_after` passed): it can be read,
/// modified and deleted, not searched or given files.
pub(crate) fn vector_store_expired(id: &str, what: &str) -> ApiError {
    ApiError::invalid(format!(
        "Vector store '{id}' has expired (expires_after) and can no longer be {what}."
    ))
    .param("vector_store_id")
    .code("vector_store_expired")
}

/// Seconds since the epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `?after=&before=&limit=&order=` of the resource lists (OpenAI's
/// defaults: 20, newest first; `limit` 1 to 100, files up to 10000).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageQuery {
    pub after: Option<String>,
    pub before: Option<String>,
    pub limit: Option<usize>,
    pub order: Option<String>,
}

impl PageQuery {
    pub(crate) fn request(&self, max_limit: usize) -> Result<ListRequest, ApiError> {
        let limit = self.limit.unwrap_or(20);
        if !(1..=max_limit).contains(&limit) {
            return Err(
                ApiError::invalid(format!("limit must be between 1 and {max_limit}"))
                    .param("limit"),
            );
        }
        let order = match self.order.as_deref() {
            None | Some("desc") => SortOrder::Desc,
            Some("asc") => SortOrder::Asc,
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "order must be 'asc' or 'desc', got '{other}'"
                ))
                .param("order"))
            }
        };
        Ok(ListRequest {
            after: self.after.clone(),
            before: self.before.clone(),
            limit,
            order,
        })
    }
}

/// A cursor naming no listed object: the client's mistake, not ours.
pub(crate) fn cursor_error(e: windlass_engine::StoreError) -> ApiError {
    match e {
        windlass_engine::StoreError::UnknownCursor(id) => {
            ApiError::invalid(format!("No object with id '{id}' in this list.")).param("after")
        }
        other => other.into(),
    }
}

/// The resources, or the answer of a route when the binary wired none.
pub(crate) fn enabled<'a>(
    resources: Option<&'a Arc<Resources>>,
    what: &str,
) -> Result<&'a Arc<Resources>, ApiError> {
    resources.ok_or_else(|| not_enabled(what))
}

/// Answer of a resource route when the binary wired no resources.
fn not_enabled(what: &str) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "invalid_request_error",
        format!("{what} are not enabled on this server."),
    )
    .code("not_found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_query_bounds() {
        let q = |limit, order: Option<&str>| PageQuery {
            limit,
            order: order.map(str::to_owned),
            ..PageQuery::default()
        };
        let r = q(None, None).request(100).unwrap();
        assert_eq!((r.limit, r.order), (20, SortOrder::Desc));
        assert_eq!(
            q(Some(5), Some("asc")).request(100).unwrap().order,
            SortOrder::Asc
        );
        assert!(q(Some(0), None).request(100).is_err());
        assert!(q(Some(101), None).request(100).is_err());
        assert!(q(Some(10_000), None).request(10_000).is_ok());
        assert!(q(None, Some("up")).request(100).is_err());
    }
}

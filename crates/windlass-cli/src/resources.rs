//! The resource routes' wiring: `[files]` and `[retrieval]` settings, the
//! embedding model chosen through the upstream table, and `/v1/embeddings`
//! routed by model over that table.
//!
//! ```toml
//! [files]
//! max_bytes = 536870912          # largest upload (default 512 MiB)
//!
//! [retrieval]
//! embedding_model = "all-minilm" # a model the [[upstreams]] table routes; unset: keyword-only
//! ingest_concurrency = 2         # files ingested at once by this process
//! lease_secs = 60                # a dead process's files are taken again after this
//! poll_secs = 5                  # look for files attached on other replicas
//! drain_secs = 10                # on shutdown, wait this long for files in progress
//! expiry_sweep_secs = 60         # how often expired vector stores and containers are swept
//! ```
//!
//! [`wire`] is the one function that builds the resources; other wiring
//! (the `file_search` executor) takes what it needs from its result:
//! `resources.vector_stores`, `resources.embedder`, or
//! `resources.searcher()`, before handing it to the server.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use windlass_engine::{Embedder, ProviderError};
use windlass_protocol::{EmbeddingRequest, EmbeddingResponse};
use windlass_providers::{EmbeddingsClient, RouterProvider, UpstreamKind};
use windlass_server::{EmbeddingsUpstreams, IngestConfig, Resources};

use crate::store_open::OpenedStore;
use crate::upstreams::ResolvedUpstream;

/// `[files]`.
#[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesFile {
    /// Largest uploaded file in bytes (default 512 MiB). Also bounds the
    /// body of the upload routes (plus 64 KiB of form overhead).
    pub max_bytes: Option<u64>,
}

/// `[retrieval]`.
#[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrievalFile {
    /// The embedding model, a name the `[[upstreams]]` table routes (sent
    /// to that upstream's `/embeddings`). Unset: vector stores are
    /// keyword-only and say so (`search_mode: "keyword"`).
    pub embedding_model: Option<String>,
    /// Files this process ingests at once (default 2).
    pub ingest_concurrency: Option<usize>,
    /// Seconds a claim on a file lasts without renewal (default 60).
    pub lease_secs: Option<u64>,
    /// Seconds between looks for pending files (default 5).
    pub poll_secs: Option<u64>,
    /// Seconds a draining server waits for files in progress (default 10).
    pub drain_secs: Option<u64>,
    /// Seconds between expiry sweeps (default 60): vector stores whose
    /// `expires_after` has passed are marked `expired` and their chunks
    /// deleted; idle containers expire.
    pub expiry_sweep_secs: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ResourcesError {
    #[error("[retrieval] embedding_model `{0}` is not served by any upstream")]
    UnknownModel(String),
    #[error("[retrieval] embedding_model `{model}` routes to upstream `{upstream}`, whose kind has no /embeddings")]
    NoEmbeddings { model: String, upstream: String },
    #[error("upstream `{name}`: {error}")]
    Client { name: String, error: ProviderError },
    #[error("[retrieval] {0} must be at least 1")]
    Zero(&'static str),
}

/// `[retrieval]` resolved.
pub fn ingest_config(file: &RetrievalFile) -> Result<IngestConfig, ResourcesError> {
    let mut cfg = IngestConfig::default();
    let secs = |v: Option<u64>, name, default: Duration| match v {
        Some(0) => Err(ResourcesError::Zero(name)),
        Some(n) => Ok(Duration::from_secs(n)),
        None => Ok(default),
    };
    cfg.lease = secs(file.lease_secs, "lease_secs", cfg.lease)?;
    cfg.poll = secs(file.poll_secs, "poll_secs", cfg.poll)?;
    cfg.drain = secs(file.drain_secs, "drain_secs", cfg.drain)?;
    cfg.expiry_sweep = secs(
        file.expiry_sweep_secs,
        "expiry_sweep_secs",
        cfg.expiry_sweep,
    )?;
    match file.ingest_concurrency {
        Some(0) => return Err(ResourcesError::Zero("ingest_concurrency")),
        Some(n) => cfg.concurrency = n,
        None => {}
    }
    Ok(cfg)
}

/// Builds the resources over the opened store: the embedder when
/// `[retrieval] embedding_model` is set, `/v1/embeddings` over the table.
pub fn wire(
    opened: &OpenedStore,
    files: &FilesFile,
    retrieval: &RetrievalFile,
    router: &Arc<RouterProvider>,
    upstreams: &[ResolvedUpstream],
) -> Result<Resources, ResourcesError> {
    let embeddings = UpstreamEmbeddings::new(router.clone(), upstreams)?;
    let embedder = match &retrieval.embedding_model {
        Some(model) => Some(embedder(model, router, upstreams)?),
        None => None,
    };
    let mut resources = Resources::new(
        opened.files.clone(),
        opened.vector_stores.clone(),
        opened.containers.clone(),
    )
    .with_embedder(embedder)
    .with_embeddings(Some(Arc::new(embeddings)))
    .with_ingest(ingest_config(retrieval)?);
    if let Some(max) = files.max_bytes {
        resources = resources.with_file_max_bytes(max);
    }
    Ok(resources)
}

/// The retrieval embedder: `model` on the upstream the table routes it to,
/// under the name that upstream knows it by.
pub fn embedder(
    model: &str,
    router: &RouterProvider,
    upstreams: &[ResolvedUpstream],
) -> Result<Arc<dyn Embedder>, ResourcesError> {
    let (i, name) = router
        .route(model)
        .ok_or_else(|| ResourcesError::UnknownModel(model.to_owned()))?;
    let u = &upstreams[i];
    if !serves_embeddings(u.kind) {
        return Err(ResourcesError::NoEmbeddings {
            model: model.to_owned(),
            upstream: u.name.clone(),
        });
    }
    let client = EmbeddingsClient::new(u.provider.clone(), name).map_err(|error| {
        ResourcesError::Client {
            name: u.name.clone(),
            error,
        }
    })?;
    Ok(Arc::new(client))
}

/// OpenAI-compatible servers have `/embeddings`; Anthropic's API has none.
fn serves_embeddings(kind: UpstreamKind) -> bool {
    !matches!(kind, UpstreamKind::Anthropic)
}

/// `POST /v1/embeddings` over the upstream table: the model picks the
/// upstream (the same rules as responses), renamed as that upstream knows it.
pub struct UpstreamEmbeddings {
    router: Arc<RouterProvider>,
    /// One client per upstream, in table order; `None` for a kind without
    /// `/embeddings`.
    clients: Vec<(String, Option<EmbeddingsClient>)>,
}

impl UpstreamEmbeddings {
    pub fn new(
        router: Arc<RouterProvider>,
        upstreams: &[ResolvedUpstream],
    ) -> Result<Self, ResourcesError> {
        let mut clients = Vec::with_capacity(upstreams.len());
        for u in upstreams {
            let client =
                match serves_embeddings(u.kind) {
                    true => Some(EmbeddingsClient::new(u.provider.clone(), "").map_err(
                        |error| ResourcesError::Client {
                            name: u.name.clone(),
                            error,
                        },
                    )?),
                    false => None,
                };
            clients.push((u.name.clone(), client));
        }
        Ok(UpstreamEmbeddings { router, clients })
    }
}

#[async_trait::async_trait]
impl EmbeddingsUpstreams for UpstreamEmbeddings {
    async fn create(
        &self,
        mut request: EmbeddingRequest,
    ) -> Result<EmbeddingResponse, ProviderError> {
        let unknown = || ProviderError::Unsupported {
            message: format!(
                "The model `{}` is not served by any configured upstream.",
                request.model
            ),
            param: Some("model".into()),
        };
        let (i, name) = self.router.route(&request.model).ok_or_else(unknown)?;
        let (upstream, client) = self.clients.get(i).ok_or_else(unknown)?;
        let Some(client) = client else {
            return Err(ProviderError::Unsupported {
                message: format!(
                    "The model `{}` is served by upstream `{upstream}`, which has no embeddings endpoint.",
                    request.model
                ),
                param: Some("model".into()),
            });
        };
        request.model = name;
        client.create(&request).await
    }
}

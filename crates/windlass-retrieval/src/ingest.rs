//! Ingestion of one attached file, end to end: its bytes from the file
//! store, text extracted, cut into token chunks, embedded when the vector
//! store has an embedding model, and written with its status in one
//! transaction (`VectorStoreStore::finish_ingestion`). A file ends
//! `completed`, or `failed` with OpenAI's `last_error` codes:
//! `unsupported_file` (type), `invalid_file` (unreadable), `server_error`
//! (embedding upstream, tokenizer). Nothing is half-indexed.

use std::sync::Arc;

use windlass_engine::{
    Embedder, FileStore, IngestionJob, IngestionOutcome, NewChunk, StoreError, VectorStoreStore,
};
use windlass_protocol::{LastError, LastErrorCode};

use crate::chunk::{chunk, TextChunk};
use crate::extract::extract;

/// How a claimed file's ingestion ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ingested {
    Completed {
        chunks: usize,
    },
    Failed(LastError),
    /// No longer `in_progress` when the outcome was written (cancelled,
    /// detached or deleted meanwhile): nothing was written.
    Dropped,
}

/// Ingests files into vector stores.
#[derive(Clone)]
pub struct Ingestor {
    files: Arc<dyn FileStore>,
    stores: Arc<dyn VectorStoreStore>,
    /// The configured embedding model, if any.
    embedder: Option<Arc<dyn Embedder>>,
}

impl Ingestor {
    pub fn new(
        files: Arc<dyn FileStore>,
        stores: Arc<dyn VectorStoreStore>,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Ingestor {
        Ingestor {
            files,
            stores,
            embedder,
        }
    }

    /// Claims up to `limit` pending files for `worker` (lease `lease_secs`
    /// from `now`) and ingests them one after the other. A worker runs this
    /// at start (files a dead process left `in_progress` are claimable once
    /// its lease ends) and whenever files are attached.
    pub async fn run_pending(
        &self,
        worker: &str,
        now: u64,
        lease_secs: u64,
        limit: usize,
    ) -> Result<Vec<(IngestionJob, Ingested)>, StoreError> {
        let jobs = self
            .stores
            .claim_ingestions(worker, now, lease_secs, limit)
            .await?;
        let mut out = Vec::with_capacity(jobs.len());
        for job in jobs {
            let done = self.ingest(&job).await?;
            out.push((job, done));
        }
        Ok(out)
    }

    /// Ingests one claimed file and writes the outcome. An `Err` is a
    /// failure of the stores themselves (the file stays `in_progress` and
    /// claimable when the lease ends).
    pub async fn ingest(&self, job: &IngestionJob) -> Result<Ingested, StoreError> {
        let outcome = match self.outcome(job).await? {
            Ok((chunks, usage_bytes)) => IngestionOutcome::Completed {
                chunks,
                usage_bytes,
            },
            Err(error) => IngestionOutcome::Failed(error),
        };
        let written = self.stores.finish_ingestion(job, &outcome).await?;
        Ok(match (written, outcome) {
            (false, _) => Ingested::Dropped,
            (true, IngestionOutcome::Completed { chunks, .. }) => Ingested::Completed {
                chunks: chunks.len(),
            },
            (true, IngestionOutcome::Failed(e)) => Ingested::Failed(e),
        })
    }

    /// The chunks and text bytes of the file, or why it fails.
    async fn outcome(
        &self,
        job: &IngestionJob,
    ) -> Result<Result<(Vec<NewChunk>, u64), LastError>, StoreError> {
        let Some(bytes) = self.files.file_content(&job.tenant, &job.file_id).await? else {
            return Ok(Err(error(
                LastErrorCode::InvalidFile,
                "the file no longer exists".into(),
            )));
        };
        let embedder = match (&job.embedding_model, &self.embedder) {
            (None, _) => None,
            (Some(model), Some(e)) if e.model() == model => Some(e.clone()),
            (Some(model), _) => {
                return Ok(Err(error(
                    LastErrorCode::ServerError,
                    format!("the embedding model '{model}' of this vector store is not configured"),
                )))
            }
        };
        let (filename, sizes) = (job.filename.clone(), job.chunking);
        // Extraction and tokenizing are CPU-bound: off the async threads.
        let cut = tokio::task::spawn_blocking(move || {
            let text = extract(&filename, &bytes).map_err(|e| error(e.code(), e.to_string()))?;
            let chunks = chunk(&text, sizes)
                .map_err(|e| error(LastErrorCode::ServerError, e.to_string()))?;
            Ok::<_, LastError>((chunks, text.len() as u64))
        })
        .await
        .map_err(|e| StoreError::Backend(format!("ingestion task: {e}")))?;
        let (chunks, usage) = match cut {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        Ok(embed(embedder.as_deref(), chunks).await.map(|c| (c, usage)))
    }
}

/// The chunks, with their embeddings when there is an embedder.
async fn embed(
    embedder: Option<&dyn Embedder>,
    chunks: Vec<TextChunk>,
) -> Result<Vec<NewChunk>, LastError> {
    let Some(embedder) = embedder else {
        return Ok(chunks.into_iter().map(|c| new_chunk(c, None)).collect());
    };
    let texts: Vec<String> = chunks.iter().map(|c| c.text.clone()).collect();
    let vectors = embedder.embed(&texts).await.map_err(|e| {
        error(
            LastErrorCode::ServerError,
            format!("embedding with '{}' failed: {e}", embedder.model()),
        )
    })?;
    if vectors.len() != chunks.len() {
        return Err(error(
            LastErrorCode::ServerError,
            format!(
                "the embedding model returned {} vectors for {} chunks",
                vectors.len(),
                chunks.len()
            ),
        ));
    }
    Ok(chunks
        .into_iter()
        .zip(vectors)
        .map(|(c, v)| new_chunk(c, Some(v)))
        .collect())
}

fn new_chunk(c: TextChunk, embedding: Option<Vec<f32>>) -> NewChunk {
    NewChunk {
        text: c.text,
        tokens: c.tokens,
        embedding,
    }
}

fn error(code: LastErrorCode, message: String) -> LastError {
    LastError { code, message }
}

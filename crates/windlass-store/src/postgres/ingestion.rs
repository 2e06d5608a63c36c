//! Background ingestion's side of the Postgres store: claims (`SKIP LOCKED`,
//! so replicas never take the same file) and outcomes written at once.

use deadpool_postgres::GenericClient;
use windlass_engine::{IngestionJob, IngestionOutcome, NewChunk, StoreError};

use super::error::backend;
use crate::retrieval::records::{chunking, encode_last_error, to_i64};

/// Rows per chunk insert: keeps one statement's parameters moderate.
const INSERT_BATCH: usize = 500;

const CLAIM: &str = "\
WITH picked AS ( \
    SELECT seq FROM vector_store_files \
    WHERE status = 'in_progress' AND (claimed_until IS NULL OR claimed_until < $3) \
    ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED \
), claimed AS ( \
    UPDATE vector_store_files f SET claimed_by = $1, claimed_until = $2 \
    FROM picked WHERE f.seq = picked.seq \
    RETURNING f.seq, f.vector_store_id, f.file_id, f.max_chunk_tokens, f.chunk_overlap_tokens \
) \
SELECT v.tenant, c.vector_store_id, c.file_id, fl.filename, c.max_chunk_tokens, \
       c.chunk_overlap_tokens, v.embedding_model \
FROM claimed c JOIN vector_stores v ON v.id = c.vector_store_id JOIN files fl ON fl.id = c.file_id \
ORDER BY c.seq";

/// Chunks from parallel arrays; embeddings as one flat array sliced per
/// row (`real[][]` cannot be unnested into rows of `real[]`); with
/// pgvector, the native `embedding_v` copy too.
fn insert_chunks_sql(pgvector: Option<&str>) -> String {
    let (column, value) = match pgvector {
        Some(schema) => (
            ", embedding_v",
            format!(", e.v::{}.vector", super::pgvector::quote(schema)),
        ),
        None => ("", String::new()),
    };
    format!(
        "INSERT INTO vector_store_chunks (attachment, position, text, tokens, embedding{column}) \
         SELECT $1, $2 + t.ord - 1, t.text, t.tokens, e.v{value} \
         FROM unnest($3::text[], $4::bigint[]) WITH ORDINALITY AS t (text, tokens, ord), \
         LATERAL (SELECT CASE WHEN $5::real[] IS NULL THEN NULL \
                  ELSE ($5::real[])[((t.ord - 1) * $6 + 1):(t.ord * $6)] END AS v) e"
    )
}

pub(super) async fn claim(
    conn: &impl GenericClient,
    worker: &str,
    now: u64,
    lease_secs: u64,
    limit: usize,
) -> Result<Vec<IngestionJob>, StoreError> {
    let until = to_i64(now.saturating_add(lease_secs));
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = conn
        .query(CLAIM, &[&worker, &until, &to_i64(now), &limit])
        .await
        .map_err(backend)?;
    Ok(rows
        .iter()
        .map(|r| IngestionJob {
            tenant: r.get(0),
            vector_store_id: r.get(1),
            file_id: r.get(2),
            filename: r.get(3),
            chunking: chunking(r.get(4), r.get(5)),
            embedding_model: r.get(6),
        })
        .collect())
}

pub(super) async fn finish(
    conn: &mut deadpool_postgres::Object,
    pgvector: Option<&str>,
    job: &IngestionJob,
    outcome: &IngestionOutcome,
) -> Result<bool, StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    // Locked: a concurrent cancel or detach waits, then sees the outcome.
    let row = tx
        .query_opt(
            "SELECT f.seq FROM vector_store_files f JOIN vector_stores v ON v.id = f.vector_store_id \
             WHERE f.vector_store_id = $1 AND f.file_id = $2 AND v.tenant = $3 \
             AND f.status = 'in_progress' FOR UPDATE OF f",
            &[&job.vector_store_id, &job.file_id, &job.tenant],
        )
        .await
        .map_err(backend)?;
    let Some(row) = row else {
        return Ok(false);
    };
    let seq: i64 = row.get(0);
    tx.execute(
        "DELETE FROM vector_store_chunks WHERE attachment = $1",
        &[&seq],
    )
    .await
    .map_err(backend)?;
    match outcome {
        IngestionOutcome::Completed {
            chunks,
            usage_bytes,
        } => {
            let sql = insert_chunks_sql(pgvector);
            for (n, part) in chunks.chunks(INSERT_BATCH).enumerate() {
                insert_chunks(&tx, &sql, seq, to_i64((n * INSERT_BATCH) as u64), part).await?;
            }
            tx.execute(
                "UPDATE vector_store_files SET status = 'completed', usage_bytes = $2, \
                 last_error = NULL, claimed_by = NULL, claimed_until = NULL WHERE seq = $1",
                &[&seq, &to_i64(*usage_bytes)],
            )
            .await
            .map_err(backend)?;
        }
        IngestionOutcome::Failed(error) => {
            tx.execute(
                "UPDATE vector_store_files SET status = 'failed', usage_bytes = 0, last_error = $2, \
                 claimed_by = NULL, claimed_until = NULL WHERE seq = $1",
                &[&seq, &encode_last_error(error)?],
            )
            .await
            .map_err(backend)?;
        }
    }
    tx.commit().await.map_err(backend)?;
    Ok(true)
}

async fn insert_chunks(
    tx: &impl GenericClient,
    sql: &str,
    attachment: i64,
    first: i64,
    chunks: &[NewChunk],
) -> Result<(), StoreError> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let tokens: Vec<i64> = chunks.iter().map(|c| i64::from(c.tokens)).collect();
    let (flat, dims) = flat_embeddings(chunks)?;
    tx.execute(sql, &[&attachment, &first, &texts, &tokens, &flat, &dims])
        .await
        .map(drop)
        .map_err(backend)
}

/// Every chunk's embedding in one array, or `None` when no chunk has one.
fn flat_embeddings(chunks: &[NewChunk]) -> Result<(Option<Vec<f32>>, i64), StoreError> {
    let dims = match chunks.first().and_then(|c| c.embedding.as_ref()) {
        None if chunks.iter().all(|c| c.embedding.is_none()) => return Ok((None, 0)),
        None => {
            return Err(StoreError::Backend(
                "chunks of one file are partly embedded".into(),
            ))
        }
        Some(e) => e.len(),
    };
    let mut flat = Vec::with_capacity(dims * chunks.len());
    for c in chunks {
        match &c.embedding {
            Some(e) if e.len() == dims => flat.extend_from_slice(e),
            _ => {
                return Err(StoreError::Backend(
                    "chunks of one file have embeddings of different sizes".into(),
                ))
            }
        }
    }
    Ok((Some(flat), i64::try_from(dims).unwrap_or(0)))
}

//! Background ingestion's side of the SQLite store: claiming files with a
//! lease, and writing an outcome (all chunks and the status) at once.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use windlass_engine::{IngestionJob, IngestionOutcome, StoreError};

use crate::codec::backend;
use crate::retrieval::records::{chunking, encode_last_error, to_i64};
use crate::retrieval::vectors::to_blob;

pub(super) fn claim(
    conn: &mut Connection,
    worker: &str,
    now: u64,
    lease_secs: u64,
    limit: usize,
) -> Result<Vec<IngestionJob>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let jobs = {
        let mut stmt = tx
            .prepare_cached(
                "SELECT f.seq, v.tenant, f.vector_store_id, f.file_id, fl.filename, \
                 f.max_chunk_tokens, f.chunk_overlap_tokens, v.embedding_model \
                 FROM vector_store_files f \
                 JOIN vector_stores v ON v.id = f.vector_store_id \
                 JOIN files fl ON fl.id = f.file_id \
                 WHERE f.status = 'in_progress' \
                 AND (f.claimed_until IS NULL OR f.claimed_until < ?1) \
                 ORDER BY f.seq LIMIT ?2",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map(params![to_i64(now), limit], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    IngestionJob {
                        tenant: r.get(1)?,
                        vector_store_id: r.get(2)?,
                        file_id: r.get(3)?,
                        filename: r.get(4)?,
                        chunking: chunking(r.get(5)?, r.get(6)?),
                        embedding_model: r.get(7)?,
                    },
                ))
            })
            .map_err(backend)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(backend)?
    };
    let until = to_i64(now.saturating_add(lease_secs));
    for (seq, _) in &jobs {
        tx.execute(
            "UPDATE vector_store_files SET claimed_by = ?2, claimed_until = ?3 WHERE seq = ?1",
            params![seq, worker, until],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(jobs.into_iter().map(|(_, j)| j).collect())
}

pub(super) fn renew(conn: &mut Connection, worker: &str, until: u64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE vector_store_files SET claimed_until = ?2 \
         WHERE claimed_by = ?1 AND status = 'in_progress'",
        params![worker, to_i64(until)],
    )
    .map(drop)
    .map_err(backend)
}

pub(super) fn finish(
    conn: &mut Connection,
    job: &IngestionJob,
    outcome: &IngestionOutcome,
) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let seq: Option<i64> = tx
        .prepare_cached(
            "SELECT f.seq FROM vector_store_files f JOIN vector_stores v ON v.id = f.vector_store_id \
             WHERE f.vector_store_id = ?1 AND f.file_id = ?2 AND v.tenant = ?3 \
             AND f.status = 'in_progress'",
        )
        .and_then(|mut s| {
            s.query_row(params![job.vector_store_id, job.file_id, job.tenant], |r| r.get(0))
                .optional()
        })
        .map_err(backend)?;
    let Some(seq) = seq else {
        return Ok(false);
    };
    tx.execute(
        "DELETE FROM vector_store_chunks WHERE attachment = ?1",
        [seq],
    )
    .map_err(backend)?;
    match outcome {
        IngestionOutcome::Completed {
            chunks,
            usage_bytes,
        } => {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO vector_store_chunks (attachment, position, text, tokens, embedding) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(backend)?;
            for (position, c) in chunks.iter().enumerate() {
                let embedding = c.embedding.as_deref().map(to_blob);
                insert
                    .execute(params![
                        seq,
                        to_i64(position as u64),
                        c.text,
                        c.tokens,
                        embedding
                    ])
                    .map_err(backend)?;
            }
            drop(insert);
            tx.execute(
                "UPDATE vector_store_files SET status = 'completed', usage_bytes = ?2, \
                 last_error = NULL, claimed_by = NULL, claimed_until = NULL WHERE seq = ?1",
                params![seq, to_i64(*usage_bytes)],
            )
            .map_err(backend)?;
        }
        IngestionOutcome::Failed(error) => {
            tx.execute(
                "UPDATE vector_store_files SET status = 'failed', usage_bytes = 0, \
                 last_error = ?2, claimed_by = NULL, claimed_until = NULL WHERE seq = ?1",
                params![seq, encode_last_error(error)?],
            )
            .map_err(backend)?;
        }
    }
    tx.commit().map_err(backend)?;
    Ok(true)
}

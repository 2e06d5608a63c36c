//! Search on SQLite: BM25 from FTS5 and cosine similarity over the stored
//! f32 blobs of the reachable chunks, fused (`retrieval::search`).

use rusqlite::{params, Connection};
use windlass_engine::{ChunkQuery, Searched, StoreError};

use crate::codec::backend;
use crate::retrieval::fuse::CANDIDATES;
use crate::retrieval::records::{decode_attributes, to_i64};
use crate::retrieval::search::{refusal, ChunkRow, Plan, Reachable};
use crate::retrieval::terms::fts5_query;
use crate::retrieval::vectors::{cosine, from_blob, TopK};

fn json<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Backend(e.to_string()))
}

/// One read transaction: the stores' gate and the chunks searched are of
/// the same moment (a sweep cannot fall between them). A connection
/// already in a transaction (the writer an in-memory database shares) is
/// consistent as it is.
pub(super) fn search(
    conn: &Connection,
    tenant: &str,
    query: &ChunkQuery,
) -> Result<Searched, StoreError> {
    if !conn.is_autocommit() {
        return search_in(conn, tenant, query);
    }
    let tx = conn.unchecked_transaction().map_err(backend)?;
    let found = search_in(&tx, tenant, query);
    // Read only: ending it either way changes nothing.
    tx.rollback().map_err(backend)?;
    found
}

fn search_in(conn: &Connection, tenant: &str, query: &ChunkQuery) -> Result<Searched, StoreError> {
    let mut ids = query.vector_store_ids.clone();
    ids.sort();
    ids.dedup();
    let stores = json(&ids)?;
    if let Some(refused) = gate(conn, tenant, &stores, ids.len(), query.now)? {
        return Ok(refused);
    }
    let plan = Plan::new(query, reachable(conn, tenant, &stores)?);
    let keyword = keyword_ranking(conn, &plan)?;
    let vector = match &query.embedding {
        Some(e) if !plan.embedded.is_empty() => {
            Some(vector_ranking(conn, &plan.embedded, &e.vector)?)
        }
        _ => None,
    };
    let fused = plan.fuse(query, &keyword, vector.as_deref());
    let rows = chunk_rows(conn, &fused)?;
    Ok(Searched::Done(plan.outcome(&fused, rows, vector.is_some())))
}

/// Why the search may not run: a store that is not the tenant's, or one
/// expired at `now` (marked by the sweep or past its policy).
fn gate(
    conn: &Connection,
    tenant: &str,
    stores: &str,
    wanted: usize,
    now: u64,
) -> Result<Option<Searched>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, expired_at IS NOT NULL OR (expires_after_days IS NOT NULL \
                 AND last_active_at + expires_after_days * 86400 <= ?3) \
             FROM vector_stores \
             WHERE tenant = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id",
        )
        .map_err(backend)?;
    let found = stmt
        .query_map(params![tenant, stores, to_i64(now)], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?))
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(backend)?;
    Ok(refusal(found, wanted))
}

/// The completed attachments of the stores (a JSON array of ids).
fn reachable(conn: &Connection, tenant: &str, stores: &str) -> Result<Vec<Reachable>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT f.seq, f.vector_store_id, f.file_id, fl.filename, f.attributes, v.embedding_model \
             FROM vector_store_files f \
             JOIN vector_stores v ON v.id = f.vector_store_id \
             JOIN files fl ON fl.id = f.file_id \
             WHERE v.tenant = ?1 AND f.vector_store_id IN (SELECT value FROM json_each(?2)) \
             AND f.status = 'completed' ORDER BY f.seq",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![tenant, stores], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .map_err(backend)?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, vector_store_id, file_id, filename, attributes, model) = row.map_err(backend)?;
        out.push(Reachable {
            seq,
            vector_store_id,
            file_id,
            filename,
            attributes: decode_attributes(attributes.as_deref())?.unwrap_or_default(),
            model,
        });
    }
    Ok(out)
}

fn keyword_ranking(conn: &Connection, plan: &Plan) -> Result<Vec<i64>, StoreError> {
    if plan.terms.is_empty() || plan.reachable.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.id FROM vector_store_chunks_fts \
             JOIN vector_store_chunks c ON c.id = vector_store_chunks_fts.rowid \
             WHERE vector_store_chunks_fts MATCH ?1 \
             AND c.attachment IN (SELECT value FROM json_each(?2)) \
             ORDER BY bm25(vector_store_chunks_fts), c.id LIMIT ?3",
        )
        .map_err(backend)?;
    let limit = i64::try_from(CANDIDATES).unwrap_or(i64::MAX);
    let ids = stmt
        .query_map(
            params![fts5_query(&plan.terms), json(&plan.keys())?, limit],
            |r| r.get(0),
        )
        .and_then(|rows| rows.collect::<Result<Vec<i64>, _>>())
        .map_err(backend)?;
    Ok(ids)
}

/// The most similar chunks of the attachments, scanning their embeddings
/// (memory stays bounded: one row at a time and a heap of `CANDIDATES`).
fn vector_ranking(
    conn: &Connection,
    attachments: &[i64],
    query: &[f32],
) -> Result<Vec<i64>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, embedding FROM vector_store_chunks \
             WHERE attachment IN (SELECT value FROM json_each(?1)) AND embedding IS NOT NULL",
        )
        .map_err(backend)?;
    let mut rows = stmt.query([json(&attachments)?]).map_err(backend)?;
    let mut top = TopK::new(CANDIDATES);
    while let Some(row) = rows.next().map_err(backend)? {
        let id: i64 = row.get(0).map_err(backend)?;
        let blob = row
            .get_ref(1)
            .map_err(backend)?
            .as_blob()
            .map_err(backend_type)?;
        if let Some(sim) = from_blob(blob).and_then(|v| cosine(&v, query)) {
            top.push(id, sim);
        }
    }
    Ok(top.into_ranking())
}

fn backend_type(e: rusqlite::types::FromSqlError) -> StoreError {
    StoreError::Corrupt(format!("chunk embedding: {e}"))
}

fn chunk_rows(conn: &Connection, fused: &[(i64, f64)]) -> Result<Vec<ChunkRow>, StoreError> {
    if fused.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, attachment, position, text FROM vector_store_chunks \
             WHERE id IN (SELECT value FROM json_each(?1))",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map([json(&ids)?], |r| {
            Ok(ChunkRow {
                id: r.get(0)?,
                attachment: r.get(1)?,
                position: r.get(2)?,
                text: r.get(3)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(backend)?;
    Ok(rows)
}

//! Search on Postgres: full-text rank (`english` configuration, OR'd words)
//! and cosine similarity, in the database with pgvector or in the gateway
//! over streamed `real[]` rows without it, fused (`retrieval::search`).

use deadpool_postgres::{GenericClient, Object};
use futures::{pin_mut, TryStreamExt};
use windlass_engine::{ChunkQuery, Searched, StoreError};

use super::error::backend;
use super::pgvector::quote;
use super::snapshot::read_snapshot;
use crate::retrieval::fuse::CANDIDATES;
use crate::retrieval::records::{decode_attributes, to_i64};
use crate::retrieval::search::{refusal, ChunkRow, Plan, Reachable};
use crate::retrieval::terms::tsquery;
use crate::retrieval::vectors::{cosine, TopK};

const CANDIDATES_I64: i64 = CANDIDATES as i64;

/// One read-only REPEATABLE READ transaction: the stores' gate and the
/// chunks searched are of the same snapshot (a sweep cannot fall between).
pub(super) async fn search(
    conn: &mut Object,
    pgvector: Option<&str>,
    tenant: &str,
    query: &ChunkQuery,
) -> Result<Searched, StoreError> {
    let tx = read_snapshot(conn).await?;
    let found = search_in(&tx, pgvector, tenant, query).await?;
    tx.commit().await.map_err(backend)?;
    Ok(found)
}

async fn search_in(
    conn: &impl GenericClient,
    pgvector: Option<&str>,
    tenant: &str,
    query: &ChunkQuery,
) -> Result<Searched, StoreError> {
    let mut ids = query.vector_store_ids.clone();
    ids.sort();
    ids.dedup();
    if let Some(refused) = gate(conn, tenant, &ids, query.now).await? {
        return Ok(refused);
    }
    let plan = Plan::new(query, reachable(conn, tenant, &ids).await?);
    let keyword = keyword_ranking(conn, &plan).await?;
    let vector = match &query.embedding {
        Some(e) if !plan.embedded.is_empty() => Some(match pgvector {
            Some(schema) => in_database(conn, schema, &plan.embedded, &e.vector).await?,
            None => in_gateway(conn, &plan.embedded, &e.vector).await?,
        }),
        _ => None,
    };
    let fused = plan.fuse(query, &keyword, vector.as_deref());
    let rows = chunk_rows(conn, &fused).await?;
    Ok(Searched::Done(plan.outcome(&fused, rows, vector.is_some())))
}

/// Why the search may not run: a store that is not the tenant's, or one
/// expired at `now` (marked by the sweep or past its policy).
async fn gate(
    conn: &impl GenericClient,
    tenant: &str,
    ids: &[String],
    now: u64,
) -> Result<Option<Searched>, StoreError> {
    let rows = conn
        .query(
            "SELECT id, expired_at IS NOT NULL OR (expires_after_days IS NOT NULL \
                 AND last_active_at + expires_after_days * 86400 <= $3) \
             FROM vector_stores WHERE tenant = $1 AND id = ANY($2) ORDER BY id",
            &[&tenant, &ids, &to_i64(now)],
        )
        .await
        .map_err(backend)?;
    let found = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    Ok(refusal(found, ids.len()))
}

async fn reachable(
    conn: &impl GenericClient,
    tenant: &str,
    stores: &[String],
) -> Result<Vec<Reachable>, StoreError> {
    let rows = conn
        .query(
            "SELECT f.seq, f.vector_store_id, f.file_id, fl.filename, f.attributes, v.embedding_model \
             FROM vector_store_files f \
             JOIN vector_stores v ON v.id = f.vector_store_id \
             JOIN files fl ON fl.id = f.file_id \
             WHERE v.tenant = $1 AND f.vector_store_id = ANY($2) AND f.status = 'completed' \
             ORDER BY f.seq",
            &[&tenant, &stores],
        )
        .await
        .map_err(backend)?;
    rows.iter()
        .map(|r| {
            Ok(Reachable {
                seq: r.get(0),
                vector_store_id: r.get(1),
                file_id: r.get(2),
                filename: r.get(3),
                attributes: decode_attributes(r.get::<_, Option<&str>>(4))?.unwrap_or_default(),
                model: r.get(5),
            })
        })
        .collect()
}

async fn keyword_ranking(conn: &impl GenericClient, plan: &Plan) -> Result<Vec<i64>, StoreError> {
    if plan.terms.is_empty() || plan.reachable.is_empty() {
        return Ok(Vec::new());
    }
    // Normalization 1 divides by 1 + log(length): longer chunks do not win
    // by length alone, as with BM25.
    let rows = conn
        .query(
            "SELECT c.id FROM vector_store_chunks c, to_tsquery('english', $1) q \
             WHERE c.tsv @@ q AND c.attachment = ANY($2) \
             ORDER BY ts_rank(c.tsv, q, 1) DESC, c.id LIMIT $3",
            &[&tsquery(&plan.terms), &plan.keys(), &CANDIDATES_I64],
        )
        .await
        .map_err(backend)?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// pgvector's cosine distance over the native column, for the chunks of
/// the query's dimensions (pgvector refuses to compare vectors of
/// different sizes).
///
/// Each embedding lives out of line (TOAST), and every mention of it in
/// the query fetches it again: the size is read from `embedding_dims`
/// (migration 12), not from the vector, and the fenced subquery (`OFFSET
/// 0`) computes the distance once per chunk, where the planner would
/// otherwise repeat it in the filter and the sort key. That is one fetch
/// per chunk instead of six (BENCHMARKS.md, "Retrieval, round 3").
async fn in_database(
    conn: &impl GenericClient,
    schema: &str,
    attachments: &[i64],
    query: &[f32],
) -> Result<Vec<i64>, StoreError> {
    let s = quote(schema);
    let sql = format!(
        "WITH q AS MATERIALIZED (SELECT $1::real[]::{s}.vector AS v) \
         SELECT id FROM ( \
             SELECT c.id, c.embedding_v OPERATOR({s}.<=>) q.v AS d \
             FROM vector_store_chunks c, q \
             WHERE c.attachment = ANY($2) AND c.embedding_dims = $3 \
             AND c.embedding_v IS NOT NULL OFFSET 0 \
         ) x WHERE d <> 'NaN'::float8 ORDER BY d, id LIMIT $4"
    );
    let dims = i32::try_from(query.len()).unwrap_or(i32::MAX);
    let rows = conn
        .query(&sql, &[&query, &attachments, &dims, &CANDIDATES_I64])
        .await
        .map_err(backend)?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Without pgvector: the embeddings streamed row by row into a bounded heap.
async fn in_gateway(
    conn: &impl GenericClient,
    attachments: &[i64],
    query: &[f32],
) -> Result<Vec<i64>, StoreError> {
    let dims = i32::try_from(query.len()).unwrap_or(i32::MAX);
    let rows = conn
        .query_raw(
            "SELECT id, embedding FROM vector_store_chunks \
             WHERE attachment = ANY($1) AND embedding_dims = $2",
            [
                &attachments as &(dyn tokio_postgres::types::ToSql + Sync),
                &dims,
            ],
        )
        .await
        .map_err(backend)?;
    pin_mut!(rows);
    let mut top = TopK::new(CANDIDATES);
    while let Some(row) = rows.try_next().await.map_err(backend)? {
        let embedding: Vec<f32> = row.get(1);
        if let Some(sim) = cosine(&embedding, query) {
            top.push(row.get(0), sim);
        }
    }
    Ok(top.into_ranking())
}

async fn chunk_rows(
    conn: &impl GenericClient,
    fused: &[(i64, f64)],
) -> Result<Vec<ChunkRow>, StoreError> {
    if fused.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
    let rows = conn
        .query(
            "SELECT id, attachment, position, text FROM vector_store_chunks WHERE id = ANY($1)",
            &[&ids],
        )
        .await
        .map_err(backend)?;
    Ok(rows
        .iter()
        .map(|r| ChunkRow {
            id: r.get(0),
            attachment: r.get(1),
            position: r.get(2),
            text: r.get(3),
        })
        .collect())
}

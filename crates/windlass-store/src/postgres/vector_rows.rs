//! Reads of vector stores, attached files and batches on Postgres, shared
//! by the trait methods (`vector_stores.rs`) and ingestion.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use windlass_engine::StoreError;
use windlass_protocol::{VectorStore, VectorStoreFile, VectorStoreFileBatch};

use super::error::backend;
use crate::retrieval::records::{batch_object, FileRow, StatusCounts, StoreRow};

pub(super) const STORE_COLUMNS: &str =
    "id, name, created_at, last_active_at, metadata, expires_after_days, embedding_model, \
     description, expired_at";

pub(super) const FILE_COLUMNS: &str = "f.file_id, f.vector_store_id, f.created_at, f.status, \
     f.usage_bytes, f.last_error, f.attributes, f.max_chunk_tokens, f.chunk_overlap_tokens";

pub(super) fn store_row(r: &Row) -> StoreRow {
    StoreRow {
        id: r.get(0),
        name: r.get(1),
        created_at: r.get(2),
        last_active_at: r.get(3),
        metadata: r.get(4),
        expires_after_days: r.get(5),
        embedding_model: r.get(6),
        description: r.get(7),
        expired_at: r.get(8),
        counts: StatusCounts::default(),
        usage_bytes: 0,
    }
}

pub(super) fn file_row(r: &Row) -> FileRow {
    FileRow {
        file_id: r.get(0),
        vector_store_id: r.get(1),
        created_at: r.get(2),
        status: r.get(3),
        usage_bytes: r.get(4),
        last_error: r.get(5),
        attributes: r.get(6),
        max_chunk_tokens: r.get(7),
        chunk_overlap_tokens: r.get(8),
    }
}

async fn counts(
    conn: &impl GenericClient,
    column: &str,
    key: &str,
) -> Result<(StatusCounts, i64), StoreError> {
    let sql = format!(
        "SELECT status, COUNT(*), COALESCE(SUM(usage_bytes), 0)::bigint FROM vector_store_files \
         WHERE {column} = $1 GROUP BY status"
    );
    let rows = conn.query(&sql, &[&key]).await.map_err(backend)?;
    let (mut counts, mut usage) = (StatusCounts::default(), 0);
    for r in rows {
        counts.add(r.get(0), r.get(1));
        usage += r.get::<_, i64>(2);
    }
    Ok((counts, usage))
}

pub(super) async fn complete(
    conn: &impl GenericClient,
    mut row: StoreRow,
) -> Result<VectorStore, StoreError> {
    let (counts, usage) = counts(conn, "vector_store_id", &row.id).await?;
    row.counts = counts;
    row.usage_bytes = usage;
    row.into_object()
}

pub(super) async fn get_store(
    conn: &impl GenericClient,
    tenant: &str,
    id: &str,
) -> Result<Option<VectorStore>, StoreError> {
    let row = conn
        .query_opt(
            &format!("SELECT {STORE_COLUMNS} FROM vector_stores WHERE id = $1 AND tenant = $2"),
            &[&id, &tenant],
        )
        .await
        .map_err(backend)?;
    match row {
        Some(r) => complete(conn, store_row(&r)).await.map(Some),
        None => Ok(None),
    }
}

/// The store's `seq`; `lock` takes it `FOR UPDATE` (writes that change its
/// files serialize on it).
pub(super) async fn store_seq(
    conn: &impl GenericClient,
    tenant: &str,
    id: &str,
    lock: bool,
) -> Result<Option<i64>, StoreError> {
    let sql = format!(
        "SELECT seq FROM vector_stores WHERE id = $1 AND tenant = $2{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let row = conn
        .query_opt(&sql, &[&id, &tenant])
        .await
        .map_err(backend)?;
    Ok(row.map(|r| r.get(0)))
}

pub(super) async fn attachment_seq(
    conn: &impl GenericClient,
    tenant: &str,
    store: &str,
    file_id: &str,
) -> Result<Option<i64>, StoreError> {
    let row = conn
        .query_opt(
            "SELECT f.seq FROM vector_store_files f JOIN vector_stores v ON v.id = f.vector_store_id \
             WHERE f.vector_store_id = $1 AND f.file_id = $2 AND v.tenant = $3",
            &[&store, &file_id, &tenant],
        )
        .await
        .map_err(backend)?;
    Ok(row.map(|r| r.get(0)))
}

pub(super) async fn get_file(
    conn: &impl GenericClient,
    tenant: &str,
    store: &str,
    file_id: &str,
) -> Result<Option<VectorStoreFile>, StoreError> {
    let row = conn
        .query_opt(
            &format!(
                "SELECT {FILE_COLUMNS} FROM vector_store_files f \
                 JOIN vector_stores v ON v.id = f.vector_store_id \
                 WHERE f.vector_store_id = $1 AND f.file_id = $2 AND v.tenant = $3"
            ),
            &[&store, &file_id, &tenant],
        )
        .await
        .map_err(backend)?;
    row.map(|r| file_row(&r).into_object()).transpose()
}

pub(super) async fn get_batch(
    conn: &impl GenericClient,
    tenant: &str,
    store: &str,
    batch: &str,
) -> Result<Option<VectorStoreFileBatch>, StoreError> {
    let row = conn
        .query_opt(
            "SELECT b.created_at, b.cancelled FROM vector_store_batches b \
             JOIN vector_stores v ON v.id = b.vector_store_id \
             WHERE b.id = $1 AND b.vector_store_id = $2 AND v.tenant = $3",
            &[&batch, &store, &tenant],
        )
        .await
        .map_err(backend)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let (counts, _) = counts(conn, "batch_id", batch).await?;
    Ok(Some(batch_object(
        batch.to_owned(),
        store.to_owned(),
        row.get(0),
        row.get(1),
        counts,
    )))
}

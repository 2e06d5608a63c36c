//! Reads of vector stores, attached files and batches on SQLite, shared by
//! the trait methods (`vector_stores.rs`) and ingestion (`ingestion.rs`).

use rusqlite::{params, Connection, OptionalExtension, Row};
use windlass_engine::StoreError;
use windlass_protocol::{VectorStore, VectorStoreFile, VectorStoreFileBatch};

use crate::codec::backend;
use crate::retrieval::records::{batch_object, FileRow, StatusCounts, StoreRow};

pub(super) const STORE_COLUMNS: &str =
    "id, name, created_at, last_active_at, metadata, expires_after_days, embedding_model, \
     description, expired_at";

pub(super) const FILE_COLUMNS: &str = "f.file_id, f.vector_store_id, f.created_at, f.status, \
     f.usage_bytes, f.last_error, f.attributes, f.max_chunk_tokens, f.chunk_overlap_tokens";

pub(super) fn store_row(r: &Row<'_>) -> rusqlite::Result<StoreRow> {
    Ok(StoreRow {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
        last_active_at: r.get(3)?,
        metadata: r.get(4)?,
        expires_after_days: r.get(5)?,
        embedding_model: r.get(6)?,
        description: r.get(7)?,
        expired_at: r.get(8)?,
        counts: StatusCounts::default(),
        usage_bytes: 0,
    })
}

pub(super) fn file_row(r: &Row<'_>) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        file_id: r.get(0)?,
        vector_store_id: r.get(1)?,
        created_at: r.get(2)?,
        status: r.get(3)?,
        usage_bytes: r.get(4)?,
        last_error: r.get(5)?,
        attributes: r.get(6)?,
        max_chunk_tokens: r.get(7)?,
        chunk_overlap_tokens: r.get(8)?,
    })
}

/// Counts by status (and total usage) of the files matching `column = key`.
fn counts(conn: &Connection, column: &str, key: &str) -> Result<(StatusCounts, i64), StoreError> {
    let sql = format!(
        "SELECT status, COUNT(*), IFNULL(SUM(usage_bytes), 0) FROM vector_store_files \
         WHERE {column} = ?1 GROUP BY status"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(backend)?;
    let rows = stmt
        .query_map([key], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .map_err(backend)?;
    let (mut counts, mut usage) = (StatusCounts::default(), 0);
    for row in rows {
        let (status, n, bytes) = row.map_err(backend)?;
        counts.add(&status, n);
        usage += bytes;
    }
    Ok((counts, usage))
}

/// The store object of a row, with its files' counts and usage.
pub(super) fn complete(conn: &Connection, mut row: StoreRow) -> Result<VectorStore, StoreError> {
    let (counts, usage) = counts(conn, "vector_store_id", &row.id)?;
    row.counts = counts;
    row.usage_bytes = usage;
    row.into_object()
}

pub(super) fn get_store(
    conn: &Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<VectorStore>, StoreError> {
    let row = conn
        .prepare_cached(&format!(
            "SELECT {STORE_COLUMNS} FROM vector_stores WHERE id = ?1 AND tenant = ?2"
        ))
        .and_then(|mut s| s.query_row(params![id, tenant], store_row).optional())
        .map_err(backend)?;
    row.map(|r| complete(conn, r)).transpose()
}

pub(super) fn store_seq(
    conn: &Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT seq FROM vector_stores WHERE id = ?1 AND tenant = ?2")
        .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)).optional())
        .map_err(backend)
}

/// The attachment key of a file in one of the tenant's stores.
pub(super) fn attachment_seq(
    conn: &Connection,
    tenant: &str,
    store: &str,
    file_id: &str,
) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached(
        "SELECT f.seq FROM vector_store_files f JOIN vector_stores v ON v.id = f.vector_store_id \
         WHERE f.vector_store_id = ?1 AND f.file_id = ?2 AND v.tenant = ?3",
    )
    .and_then(|mut s| {
        s.query_row(params![store, file_id, tenant], |r| r.get(0))
            .optional()
    })
    .map_err(backend)
}

pub(super) fn get_file(
    conn: &Connection,
    tenant: &str,
    store: &str,
    file_id: &str,
) -> Result<Option<VectorStoreFile>, StoreError> {
    let row = conn
        .prepare_cached(&format!(
            "SELECT {FILE_COLUMNS} FROM vector_store_files f \
             JOIN vector_stores v ON v.id = f.vector_store_id \
             WHERE f.vector_store_id = ?1 AND f.file_id = ?2 AND v.tenant = ?3"
        ))
        .and_then(|mut s| {
            s.query_row(params![store, file_id, tenant], file_row)
                .optional()
        })
        .map_err(backend)?;
    row.map(FileRow::into_object).transpose()
}

pub(super) fn get_batch(
    conn: &Connection,
    tenant: &str,
    store: &str,
    batch: &str,
) -> Result<Option<VectorStoreFileBatch>, StoreError> {
    let row: Option<(i64, bool)> = conn
        .prepare_cached(
            "SELECT b.created_at, b.cancelled FROM vector_store_batches b \
             JOIN vector_stores v ON v.id = b.vector_store_id \
             WHERE b.id = ?1 AND b.vector_store_id = ?2 AND v.tenant = ?3",
        )
        .and_then(|mut s| {
            s.query_row(params![batch, store, tenant], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })
        .map_err(backend)?;
    let Some((created_at, cancelled)) = row else {
        return Ok(None);
    };
    let (counts, _) = counts(conn, "batch_id", batch)?;
    Ok(Some(batch_object(
        batch.to_owned(),
        store.to_owned(),
        created_at,
        cancelled,
        counts,
    )))
}

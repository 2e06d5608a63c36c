//! Files on SQLite (`migrations/0007_files_vector_stores.sql`): metadata and
//! bytes in one row.

use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use windlass_engine::{FileStore, ListRequest, Page, StoreError};
use windlass_protocol::{FileObject, FilePurpose};

use super::write::on_writer;
use super::SqliteStore;
use crate::codec::backend;
use crate::retrieval::paging::Window;
use crate::retrieval::records::{to_i64, to_u64};

const COLUMNS: &str = "id, filename, purpose, bytes, created_at";

fn file_of(r: &Row<'_>) -> rusqlite::Result<FileObject> {
    let purpose: String = r.get(2)?;
    let purpose = FilePurpose::parse(&purpose).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            2,
            rusqlite::types::Type::Text,
            format!("unknown purpose '{purpose}'").into(),
        )
    })?;
    Ok(FileObject::new(
        r.get(0)?,
        r.get(1)?,
        to_u64(r.get(3)?),
        purpose,
        to_u64(r.get(4)?),
    ))
}

/// The `seq` of one of the tenant's files, for a cursor.
pub(super) fn file_seq(
    conn: &Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached("SELECT seq FROM files WHERE id = ?1 AND tenant = ?2")
        .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)).optional())
        .map_err(backend)
}

/// A cursor's `seq`, or the error an unknown cursor is.
pub(super) fn cursor(
    seq: impl Fn(&str) -> Result<Option<i64>, StoreError>,
    id: Option<&String>,
) -> Result<Option<i64>, StoreError> {
    match id {
        None => Ok(None),
        Some(id) => seq(id)?
            .map(Some)
            .ok_or_else(|| StoreError::UnknownCursor(id.clone())),
    }
}

fn list(
    conn: &Connection,
    tenant: &str,
    purpose: Option<FilePurpose>,
    page: &ListRequest,
) -> Result<Page<FileObject>, StoreError> {
    let seq = |id: &str| file_seq(conn, tenant, id);
    let w = Window::new(
        page,
        cursor(seq, page.after.as_ref())?,
        cursor(seq, page.before.as_ref())?,
    );
    let sql = format!(
        "SELECT {COLUMNS} FROM files WHERE tenant = ?1 AND (?2 IS NULL OR purpose = ?2) \
         AND (?3 IS NULL OR seq > ?3) AND (?4 IS NULL OR seq < ?4) \
         ORDER BY seq {} LIMIT ?5",
        w.direction()
    );
    let rows = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map(
                params![
                    tenant,
                    purpose.map(FilePurpose::as_str),
                    w.above,
                    w.below,
                    w.fetch
                ],
                file_of,
            )?
            .collect::<Result<Vec<_>, _>>()
        })
        .map_err(backend)?;
    Ok(w.page(rows))
}

/// Deletes the file's chunks, attachments and row (chunks explicitly, so
/// the FTS index is updated by its trigger whatever the cascade does).
pub(super) fn delete(conn: &mut Connection, tenant: &str, id: &str) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    if file_seq(&tx, tenant, id)?.is_none() {
        return Ok(false);
    }
    tx.execute(
        "DELETE FROM vector_store_chunks WHERE attachment IN \
         (SELECT seq FROM vector_store_files WHERE file_id = ?1)",
        [id],
    )
    .map_err(backend)?;
    tx.execute("DELETE FROM vector_store_files WHERE file_id = ?1", [id])
        .map_err(backend)?;
    tx.execute("DELETE FROM files WHERE id = ?1", [id])
        .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

#[async_trait::async_trait]
impl FileStore for SqliteStore {
    async fn create_file(
        &self,
        tenant: &str,
        file: &FileObject,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let (tenant, file, bytes) = (tenant.to_owned(), file.clone(), bytes.to_vec());
        on_writer(&self.writer, move |conn| {
            conn.prepare_cached(
                "INSERT INTO files (id, tenant, filename, purpose, bytes, created_at, content) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    file.id,
                    tenant,
                    file.filename,
                    file.purpose.as_str(),
                    // The stored size is the bytes' own, whatever the object says.
                    to_i64(bytes.len() as u64),
                    to_i64(file.created_at),
                    bytes
                ])
            })
            .map_err(|e| match crate::codec::is_unique_violation(&e) {
                true => StoreError::Duplicate(file.id.clone()),
                false => backend(e),
            })?;
            Ok(())
        })
        .await
    }

    async fn get_file(&self, tenant: &str, id: &str) -> Result<Option<FileObject>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        conn.conn()?
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM files WHERE id = ?1 AND tenant = ?2"
            ))
            .and_then(|mut s| s.query_row(params![id, tenant], file_of).optional())
            .map_err(backend)
    }

    async fn file_content(&self, tenant: &str, id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        conn.conn()?
            .prepare_cached("SELECT content FROM files WHERE id = ?1 AND tenant = ?2")
            .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)).optional())
            .map_err(backend)
    }

    async fn list_files(
        &self,
        tenant: &str,
        purpose: Option<FilePurpose>,
        page: &ListRequest,
    ) -> Result<Page<FileObject>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        list(conn.conn()?, tenant, purpose, page)
    }

    async fn delete_file(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| delete(conn, &tenant, &id)).await
    }
}

//! Files on Postgres (`migrations-pg/0006_files_vector_stores.sql`).

use deadpool_postgres::GenericClient;
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;
use windlass_engine::{FileStore, ListRequest, Page, StoreError};
use windlass_protocol::{FileObject, FilePurpose};

use super::error::backend;
use super::PgStore;
use crate::retrieval::paging::Window;
use crate::retrieval::records::{to_i64, to_u64};

const COLUMNS: &str = "id, filename, purpose, bytes, created_at";

fn file_of(r: &Row) -> Result<FileObject, StoreError> {
    let purpose: String = r.get(2);
    let purpose = FilePurpose::parse(&purpose)
        .ok_or_else(|| StoreError::Corrupt(format!("file purpose '{purpose}'")))?;
    Ok(FileObject::new(
        r.get(0),
        r.get(1),
        to_u64(r.get(3)),
        purpose,
        to_u64(r.get(4)),
    ))
}

pub(super) async fn file_seq(
    conn: &impl GenericClient,
    tenant: &str,
    id: &str,
) -> Result<Option<i64>, StoreError> {
    let row = conn
        .query_opt(
            "SELECT seq FROM files WHERE id = $1 AND tenant = $2",
            &[&id, &tenant],
        )
        .await
        .map_err(backend)?;
    Ok(row.map(|r| r.get(0)))
}

/// The `seq` of a cursor found by `seq`, or the error an unknown one is.
pub(super) fn cursor(id: Option<&String>, seq: Option<i64>) -> Result<Option<i64>, StoreError> {
    match (id, seq) {
        (None, _) => Ok(None),
        (Some(_), Some(s)) => Ok(Some(s)),
        (Some(id), None) => Err(StoreError::UnknownCursor(id.clone())),
    }
}

async fn list(
    conn: &impl GenericClient,
    tenant: &str,
    purpose: Option<FilePurpose>,
    page: &ListRequest,
) -> Result<Page<FileObject>, StoreError> {
    let after = match &page.after {
        Some(id) => cursor(Some(id), file_seq(conn, tenant, id).await?)?,
        None => None,
    };
    let before = match &page.before {
        Some(id) => cursor(Some(id), file_seq(conn, tenant, id).await?)?,
        None => None,
    };
    let w = Window::new(page, after, before);
    let sql = format!(
        "SELECT {COLUMNS} FROM files WHERE tenant = $1 AND ($2::text IS NULL OR purpose = $2) \
         AND ($3::bigint IS NULL OR seq > $3) AND ($4::bigint IS NULL OR seq < $4) \
         ORDER BY seq {} LIMIT $5",
        w.direction()
    );
    let purpose = purpose.map(FilePurpose::as_str);
    let rows = conn
        .query(&sql, &[&tenant, &purpose, &w.above, &w.below, &w.fetch])
        .await
        .map_err(backend)?;
    let files = rows.iter().map(file_of).collect::<Result<Vec<_>, _>>()?;
    Ok(w.page(files))
}

#[async_trait::async_trait]
impl FileStore for PgStore {
    async fn create_file(
        &self,
        tenant: &str,
        file: &FileObject,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let conn = self.conn().await?;
        let r = conn
            .execute(
                "INSERT INTO files (id, tenant, filename, purpose, bytes, created_at, content) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &file.id,
                    &tenant,
                    &file.filename,
                    &file.purpose.as_str(),
                    // The stored size is the bytes' own, whatever the object says.
                    &to_i64(bytes.len() as u64),
                    &to_i64(file.created_at),
                    &bytes,
                ],
            )
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                Err(StoreError::Duplicate(file.id.clone()))
            }
            Err(e) => Err(backend(e)),
        }
    }

    async fn get_file(&self, tenant: &str, id: &str) -> Result<Option<FileObject>, StoreError> {
        let conn = self.conn().await?;
        let row = conn
            .query_opt(
                &format!("SELECT {COLUMNS} FROM files WHERE id = $1 AND tenant = $2"),
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        row.as_ref().map(file_of).transpose()
    }

    async fn file_content(&self, tenant: &str, id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let conn = self.conn().await?;
        let row = conn
            .query_opt(
                "SELECT content FROM files WHERE id = $1 AND tenant = $2",
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn list_files(
        &self,
        tenant: &str,
        purpose: Option<FilePurpose>,
        page: &ListRequest,
    ) -> Result<Page<FileObject>, StoreError> {
        list(&self.conn().await?, tenant, purpose, page).await
    }

    async fn delete_file(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        let tx = conn.transaction().await.map_err(backend)?;
        let found = tx
            .query_opt(
                "SELECT seq FROM files WHERE id = $1 AND tenant = $2 FOR UPDATE",
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        if found.is_none() {
            return Ok(false);
        }
        for sql in [
            "DELETE FROM vector_store_chunks WHERE attachment IN \
             (SELECT seq FROM vector_store_files WHERE file_id = $1)",
            "DELETE FROM vector_store_files WHERE file_id = $1",
            "DELETE FROM files WHERE id = $1",
        ] {
            tx.execute(sql, &[&id]).await.map_err(backend)?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }
}

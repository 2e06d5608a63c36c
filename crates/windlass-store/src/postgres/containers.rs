//! Containers and their files on Postgres
//! (`migrations-pg/0007_containers.sql`). Every lookup names the owner
//! tenant, so another tenant's container is an unknown id; a file is
//! reached only through its container. Each operation is one statement
//! except a file write, which checks the container and replaces the path in
//! one transaction.

use deadpool_postgres::ClientWrapper;
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;
use windlass_engine::{
    ContainerListRequest, ContainerPage, ContainerStore, ExpiredContainer, SortOrder, StoreError,
};
use windlass_protocol::{Container, ContainerFile};

use super::error::backend;
use super::PgStore;
use crate::container_codec::{
    container_of, enum_str, file_of, ContainerRow, FileRow, EXPIRED, RUNNING,
};

const CONTAINER_COLUMNS: &str =
    "id, name, created_at, status, last_active_at, expires_minutes, memory_limit";
const FILE_COLUMNS: &str = "f.id, f.container_id, f.path, f.bytes, f.source, f.created_at";

fn container_row(r: &Row) -> Result<Container, StoreError> {
    container_of(ContainerRow {
        id: r.try_get(0).map_err(backend)?,
        name: r.try_get(1).map_err(backend)?,
        created_at: r.try_get(2).map_err(backend)?,
        status: r.try_get(3).map_err(backend)?,
        last_active_at: r.try_get(4).map_err(backend)?,
        expires_minutes: r.try_get(5).map_err(backend)?,
        memory_limit: r.try_get(6).map_err(backend)?,
    })
}

fn file_row(r: &Row) -> Result<ContainerFile, StoreError> {
    file_of(FileRow {
        id: r.try_get(0).map_err(backend)?,
        container_id: r.try_get(1).map_err(backend)?,
        path: r.try_get(2).map_err(backend)?,
        bytes: r.try_get(3).map_err(backend)?,
        source: r.try_get(4).map_err(backend)?,
        created_at: r.try_get(5).map_err(backend)?,
    })
}

fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `(created_at, id)` bound and order of a page; without a cursor the bound
/// is one every row passes.
fn bounds(page: &ContainerListRequest, cursor: Option<i64>) -> (&'static str, &'static str, i64) {
    match page.order {
        SortOrder::Asc => (">", "ASC", cursor.unwrap_or(i64::MIN)),
        SortOrder::Desc => ("<", "DESC", cursor.unwrap_or(i64::MAX)),
    }
}

fn page_of<T>(mut rows: Vec<T>, limit: usize) -> ContainerPage<T> {
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    ContainerPage {
        data: rows,
        has_more,
    }
}

/// `created_at` of the cursor row in its scope, or UnknownCursor.
async fn cursor(
    conn: &ClientWrapper,
    sql: &str,
    after: &str,
    scope: &str,
) -> Result<i64, StoreError> {
    let stmt = conn.prepare_cached(sql).await.map_err(backend)?;
    match conn
        .query_opt(&stmt, &[&after, &scope])
        .await
        .map_err(backend)?
    {
        Some(r) => r.try_get(0).map_err(backend),
        None => Err(StoreError::UnknownCursor(after.to_owned())),
    }
}

async fn owned(conn: &ClientWrapper, tenant: &str, id: &str) -> Result<bool, StoreError> {
    let stmt = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM containers WHERE id = $1 AND tenant = $2)")
        .await
        .map_err(backend)?;
    conn.query_one(&stmt, &[&id, &tenant])
        .await
        .map_err(backend)?
        .try_get(0)
        .map_err(backend)
}

fn is_duplicate(e: &tokio_postgres::Error, constraint: &str) -> bool {
    e.as_db_error().is_some_and(|d| {
        *d.code() == SqlState::UNIQUE_VIOLATION && d.constraint() == Some(constraint)
    })
}

#[async_trait::async_trait]
impl ContainerStore for PgStore {
    async fn create_container(
        &self,
        tenant: &str,
        container: &Container,
    ) -> Result<(), StoreError> {
        let c = container;
        let status = enum_str(&c.status)?;
        let memory = c.memory_limit.as_ref().map(enum_str).transpose()?;
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "INSERT INTO containers (id, tenant, name, created_at, status, last_active_at, \
                 expires_minutes, memory_limit) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .await
            .map_err(backend)?;
        let created_at = i64_of(c.created_at);
        let last = c.last_active_at.map(i64_of);
        let minutes = c.expires_after.map(|e| i64_of(e.minutes));
        match conn
            .execute(
                &stmt,
                &[
                    &c.id,
                    &tenant,
                    &c.name,
                    &created_at,
                    &status,
                    &last,
                    &minutes,
                    &memory,
                ],
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate(&e, "containers_pkey") => {
                Err(StoreError::Duplicate(c.id.clone()))
            }
            Err(e) => Err(backend(e)),
        }
    }

    async fn get_container(&self, tenant: &str, id: &str) -> Result<Option<Container>, StoreError> {
        let conn = self.conn().await?;
        let sql =
            format!("SELECT {CONTAINER_COLUMNS} FROM containers WHERE id = $1 AND tenant = $2");
        let stmt = conn.prepare_cached(&sql).await.map_err(backend)?;
        let row = conn
            .query_opt(&stmt, &[&id, &tenant])
            .await
            .map_err(backend)?;
        row.as_ref().map(container_row).transpose()
    }

    async fn list_containers(
        &self,
        tenant: &str,
        page: &ContainerListRequest,
    ) -> Result<ContainerPage<Container>, StoreError> {
        let conn = self.conn().await?;
        let at = match &page.after {
            Some(after) => Some(
                cursor(
                    &conn,
                    "SELECT created_at FROM containers WHERE id = $1 AND tenant = $2",
                    after,
                    tenant,
                )
                .await?,
            ),
            None => None,
        };
        let (cmp, order, at) = bounds(page, at);
        let sql = format!(
            "SELECT {CONTAINER_COLUMNS} FROM containers WHERE tenant = $1 \
             AND (created_at, id) {cmp} ($2, $3) ORDER BY created_at {order}, id {order} LIMIT $4"
        );
        let after = page.after.clone().unwrap_or_default();
        let limit = i64_of(page.limit as u64 + 1);
        let stmt = conn.prepare_cached(&sql).await.map_err(backend)?;
        let rows = conn
            .query(&stmt, &[&tenant, &at, &after, &limit])
            .await
            .map_err(backend)?;
        let data = rows.iter().map(container_row).collect::<Result<_, _>>()?;
        Ok(page_of(data, page.limit))
    }

    async fn touch_container(
        &self,
        tenant: &str,
        id: &str,
        at: u64,
    ) -> Result<Option<Container>, StoreError> {
        let conn = self.conn().await?;
        let sql = format!(
            "UPDATE containers SET last_active_at = GREATEST(COALESCE(last_active_at, 0), $3) \
             WHERE id = $1 AND tenant = $2 AND status = $4 RETURNING {CONTAINER_COLUMNS}"
        );
        let stmt = conn.prepare_cached(&sql).await.map_err(backend)?;
        let row = conn
            .query_opt(&stmt, &[&id, &tenant, &i64_of(at), &RUNNING])
            .await
            .map_err(backend)?;
        row.as_ref().map(container_row).transpose()
    }

    async fn delete_container(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        // Its files go by the foreign key's ON DELETE CASCADE.
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached("DELETE FROM containers WHERE id = $1 AND tenant = $2")
            .await
            .map_err(backend)?;
        let n = conn
            .execute(&stmt, &[&id, &tenant])
            .await
            .map_err(backend)?;
        Ok(n > 0)
    }

    async fn put_container_file(
        &self,
        tenant: &str,
        file: &ContainerFile,
        bytes: &[u8],
    ) -> Result<bool, StoreError> {
        let f = file;
        let source = enum_str(&f.source)?;
        let mut conn = self.conn().await?;
        let tx = conn.transaction().await.map_err(backend)?;
        // The row lock keeps an expiry or delete from passing this write.
        let running = tx
            .query_opt(
                "SELECT 1 FROM containers WHERE id = $1 AND tenant = $2 AND status = $3 FOR UPDATE",
                &[&f.container_id, &tenant, &RUNNING],
            )
            .await
            .map_err(backend)?
            .is_some();
        if !running {
            return Ok(false);
        }
        tx.execute(
            "DELETE FROM container_files WHERE container_id = $1 AND (path = $2 OR id = $3)",
            &[&f.container_id, &f.path, &f.id],
        )
        .await
        .map_err(backend)?;
        let inserted = tx
            .execute(
                "INSERT INTO container_files (id, container_id, path, bytes, source, created_at, \
                 content) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &f.id,
                    &f.container_id,
                    &f.path,
                    &i64_of(f.bytes),
                    &source,
                    &i64_of(f.created_at),
                    &bytes,
                ],
            )
            .await;
        match inserted {
            Ok(_) => {}
            Err(e) if is_duplicate(&e, "container_files_pkey") => {
                return Err(StoreError::Duplicate(f.id.clone()))
            }
            Err(e) => return Err(backend(e)),
        }
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn get_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<ContainerFile>, StoreError> {
        let conn = self.conn().await?;
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM container_files f JOIN containers c ON c.id = f.container_id \
             WHERE f.id = $1 AND f.container_id = $2 AND c.tenant = $3"
        );
        let stmt = conn.prepare_cached(&sql).await.map_err(backend)?;
        let row = conn
            .query_opt(&stmt, &[&file_id, &container_id, &tenant])
            .await
            .map_err(backend)?;
        row.as_ref().map(file_row).transpose()
    }

    async fn container_file_content(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "SELECT f.content FROM container_files f JOIN containers c ON c.id = f.container_id \
                 WHERE f.id = $1 AND f.container_id = $2 AND c.tenant = $3",
            )
            .await
            .map_err(backend)?;
        let row = conn
            .query_opt(&stmt, &[&file_id, &container_id, &tenant])
            .await
            .map_err(backend)?;
        row.map(|r| r.try_get(0).map_err(backend)).transpose()
    }

    async fn list_container_files(
        &self,
        tenant: &str,
        container_id: &str,
        page: &ContainerListRequest,
    ) -> Result<Option<ContainerPage<ContainerFile>>, StoreError> {
        let conn = self.conn().await?;
        if !owned(&conn, tenant, container_id).await? {
            return Ok(None);
        }
        let at = match &page.after {
            Some(after) => Some(
                cursor(
                    &conn,
                    "SELECT created_at FROM container_files WHERE id = $1 AND container_id = $2",
                    after,
                    container_id,
                )
                .await?,
            ),
            None => None,
        };
        let (cmp, order, at) = bounds(page, at);
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM container_files f WHERE f.container_id = $1 \
             AND (f.created_at, f.id) {cmp} ($2, $3) \
             ORDER BY f.created_at {order}, f.id {order} LIMIT $4"
        );
        let after = page.after.clone().unwrap_or_default();
        let limit = i64_of(page.limit as u64 + 1);
        let stmt = conn.prepare_cached(&sql).await.map_err(backend)?;
        let rows = conn
            .query(&stmt, &[&container_id, &at, &after, &limit])
            .await
            .map_err(backend)?;
        let data = rows.iter().map(file_row).collect::<Result<_, _>>()?;
        Ok(Some(page_of(data, page.limit)))
    }

    async fn delete_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "DELETE FROM container_files f USING containers c \
                 WHERE f.id = $1 AND f.container_id = $2 AND c.id = f.container_id AND c.tenant = $3",
            )
            .await
            .map_err(backend)?;
        let n = conn
            .execute(&stmt, &[&file_id, &container_id, &tenant])
            .await
            .map_err(backend)?;
        Ok(n > 0)
    }

    async fn expire_containers(&self, now: u64) -> Result<Vec<ExpiredContainer>, StoreError> {
        let conn = self.conn().await?;
        let stmt = conn
            .prepare_cached(
                "WITH due AS ( \
                     UPDATE containers SET status = $2 WHERE status = $3 \
                     AND expires_minutes IS NOT NULL \
                     AND COALESCE(last_active_at, created_at) + expires_minutes * 60 <= $1 \
                     RETURNING tenant, id \
                 ), gone AS ( \
                     DELETE FROM container_files f USING due WHERE f.container_id = due.id \
                 ) \
                 SELECT tenant, id FROM due",
            )
            .await
            .map_err(backend)?;
        let rows = conn
            .query(&stmt, &[&i64_of(now), &EXPIRED, &RUNNING])
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|r| {
                Ok(ExpiredContainer {
                    tenant: r.try_get(0).map_err(backend)?,
                    id: r.try_get(1).map_err(backend)?,
                })
            })
            .collect()
    }
}

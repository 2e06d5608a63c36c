//! Containers and their files on SQLite (`migrations/0008_containers.sql`).
//! Every lookup names the owner tenant, so another tenant's container is an
//! unknown id; a file is reached only through its container.

use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use windlass_engine::{
    ContainerListRequest, ContainerPage, ContainerStore, ExpiredContainer, SortOrder, StoreError,
};
use windlass_protocol::{Container, ContainerFile};

use super::write::on_writer;
use super::SqliteStore;
use crate::codec::{backend, is_unique_violation};
use crate::container_codec::{
    container_of, enum_str, file_of, ContainerRow, FileRow, EXPIRED, RUNNING,
};

const CONTAINER_COLUMNS: &str =
    "id, name, created_at, status, last_active_at, expires_minutes, memory_limit";
const FILE_COLUMNS: &str = "id, container_id, path, bytes, source, created_at";

fn container_row(r: &Row<'_>) -> rusqlite::Result<ContainerRow> {
    Ok(ContainerRow {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
        status: r.get(3)?,
        last_active_at: r.get(4)?,
        expires_minutes: r.get(5)?,
        memory_limit: r.get(6)?,
    })
}

fn file_row(r: &Row<'_>) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        id: r.get(0)?,
        container_id: r.get(1)?,
        path: r.get(2)?,
        bytes: r.get(3)?,
        source: r.get(4)?,
        created_at: r.get(5)?,
    })
}

fn read_container(
    conn: &Connection,
    tenant: &str,
    id: &str,
) -> Result<Option<Container>, StoreError> {
    let sql = format!("SELECT {CONTAINER_COLUMNS} FROM containers WHERE id = ?1 AND tenant = ?2");
    let row = conn
        .prepare_cached(&sql)
        .and_then(|mut s| s.query_row(params![id, tenant], container_row).optional())
        .map_err(backend)?;
    row.map(container_of).transpose()
}

/// `(created_at, id)` of the cursor row, or UnknownCursor.
fn cursor(
    conn: &Connection,
    sql: &str,
    scope: &str,
    after: &str,
) -> Result<(i64, String), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut s| {
            s.query_row(params![after, scope], |r| Ok((r.get(0)?, after.to_owned())))
                .optional()
        })
        .map_err(backend)?
        .ok_or_else(|| StoreError::UnknownCursor(after.to_owned()))
}

/// `WHERE` bound and `ORDER BY` of a page in `order`.
fn page_sql(order: SortOrder) -> (&'static str, &'static str) {
    match order {
        SortOrder::Asc => ("(created_at, id) > (?2, ?3)", "created_at ASC, id ASC"),
        SortOrder::Desc => ("(created_at, id) < (?2, ?3)", "created_at DESC, id DESC"),
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

/// One page of `table` rows scoped by `scope_column = scope`.
fn read_page<T>(
    conn: &Connection,
    table: &str,
    columns: &str,
    scope_column: &str,
    scope: &str,
    page: &ContainerListRequest,
    map: fn(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<ContainerPage<T>, StoreError> {
    let (bound, order) = page_sql(page.order);
    let (after_at, after_id) = match &page.after {
        Some(after) => {
            let sql =
                format!("SELECT created_at FROM {table} WHERE id = ?1 AND {scope_column} = ?2");
            cursor(conn, &sql, scope, after)?
        }
        // A bound every row passes (created_at is never negative or
        // i64::MAX).
        None => match page.order {
            SortOrder::Asc => (i64::MIN, String::new()),
            SortOrder::Desc => (i64::MAX, String::new()),
        },
    };
    let sql = format!(
        "SELECT {columns} FROM {table} WHERE {scope_column} = ?1 AND {bound} \
         ORDER BY {order} LIMIT ?4"
    );
    let limit = i64::try_from(page.limit.saturating_add(1)).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(&sql).map_err(backend)?;
    let rows = stmt
        .query_map(params![scope, after_at, after_id, limit], map)
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    Ok(page_of(rows, page.limit))
}

fn owned(conn: &Connection, tenant: &str, id: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM containers WHERE id = ?1 AND tenant = ?2)")
        .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)))
        .map_err(backend)
}

fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl ContainerStore for SqliteStore {
    async fn create_container(
        &self,
        tenant: &str,
        container: &Container,
    ) -> Result<(), StoreError> {
        let (tenant, c) = (tenant.to_owned(), container.clone());
        let status = enum_str(&c.status)?;
        let memory = c.memory_limit.as_ref().map(enum_str).transpose()?;
        on_writer(&self.writer, move |conn| {
            conn.prepare_cached(
                "INSERT INTO containers (id, tenant, name, created_at, status, last_active_at, \
                 expires_minutes, memory_limit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    c.id,
                    tenant,
                    c.name,
                    i64_of(c.created_at),
                    status,
                    c.last_active_at.map(i64_of),
                    c.expires_after.map(|e| i64_of(e.minutes)),
                    memory,
                ])
            })
            .map_err(|e| match is_unique_violation(&e) {
                true => StoreError::Duplicate(c.id.clone()),
                false => backend(e),
            })?;
            Ok(())
        })
        .await
    }

    async fn get_container(&self, tenant: &str, id: &str) -> Result<Option<Container>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read_container(conn.conn()?, tenant, id)
    }

    async fn list_containers(
        &self,
        tenant: &str,
        page: &ContainerListRequest,
    ) -> Result<ContainerPage<Container>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let rows = read_page(
            conn.conn()?,
            "containers",
            CONTAINER_COLUMNS,
            "tenant",
            tenant,
            page,
            container_row,
        )?;
        Ok(ContainerPage {
            data: rows
                .data
                .into_iter()
                .map(container_of)
                .collect::<Result<_, _>>()?,
            has_more: rows.has_more,
        })
    }

    async fn touch_container(
        &self,
        tenant: &str,
        id: &str,
        at: u64,
    ) -> Result<Option<Container>, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let changed = conn
                .prepare_cached(
                    "UPDATE containers SET last_active_at = MAX(IFNULL(last_active_at, 0), ?3) \
                     WHERE id = ?1 AND tenant = ?2 AND status = ?4",
                )
                .and_then(|mut s| s.execute(params![id, tenant, i64_of(at), RUNNING]))
                .map_err(backend)?;
            if changed == 0 {
                return Ok(None);
            }
            read_container(conn, &tenant, &id)
        })
        .await
    }

    async fn delete_container(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            if !owned(&tx, &tenant, &id)? {
                return Ok(false);
            }
            tx.execute("DELETE FROM container_files WHERE container_id = ?1", [&id])
                .map_err(backend)?;
            tx.execute("DELETE FROM containers WHERE id = ?1", [&id])
                .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }

    async fn put_container_file(
        &self,
        tenant: &str,
        file: &ContainerFile,
        bytes: &[u8],
    ) -> Result<bool, StoreError> {
        let (tenant, f, bytes) = (tenant.to_owned(), file.clone(), bytes.to_vec());
        let source = enum_str(&f.source)?;
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let running: bool = tx
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM containers \
                     WHERE id = ?1 AND tenant = ?2 AND status = ?3)",
                )
                .and_then(|mut s| {
                    s.query_row(params![f.container_id, tenant, RUNNING], |r| r.get(0))
                })
                .map_err(backend)?;
            if !running {
                return Ok(false);
            }
            tx.execute(
                "DELETE FROM container_files WHERE container_id = ?1 AND (path = ?2 OR id = ?3)",
                params![f.container_id, f.path, f.id],
            )
            .map_err(backend)?;
            tx.prepare_cached(
                "INSERT INTO container_files (id, container_id, path, bytes, source, created_at, \
                 content) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    f.id,
                    f.container_id,
                    f.path,
                    i64_of(f.bytes),
                    source,
                    i64_of(f.created_at),
                    bytes,
                ])
            })
            .map_err(|e| match is_unique_violation(&e) {
                true => StoreError::Duplicate(f.id.clone()),
                false => backend(e),
            })?;
            tx.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }

    async fn get_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<ContainerFile>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let sql = format!(
            "SELECT f.{} FROM container_files f JOIN containers c ON c.id = f.container_id \
             WHERE f.id = ?1 AND f.container_id = ?2 AND c.tenant = ?3",
            FILE_COLUMNS.replace(", ", ", f.")
        );
        let row = conn
            .conn()?
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_row(params![file_id, container_id, tenant], file_row)
                    .optional()
            })
            .map_err(backend)?;
        row.map(file_of).transpose()
    }

    async fn container_file_content(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        conn.conn()?
            .prepare_cached(
                "SELECT f.content FROM container_files f JOIN containers c ON c.id = f.container_id \
                 WHERE f.id = ?1 AND f.container_id = ?2 AND c.tenant = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![file_id, container_id, tenant], |r| r.get(0))
                    .optional()
            })
            .map_err(backend)
    }

    async fn list_container_files(
        &self,
        tenant: &str,
        container_id: &str,
        page: &ContainerListRequest,
    ) -> Result<Option<ContainerPage<ContainerFile>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let conn = conn.conn()?;
        if !owned(conn, tenant, container_id)? {
            return Ok(None);
        }
        let rows = read_page(
            conn,
            "container_files",
            FILE_COLUMNS,
            "container_id",
            container_id,
            page,
            file_row,
        )?;
        Ok(Some(ContainerPage {
            data: rows
                .data
                .into_iter()
                .map(file_of)
                .collect::<Result<_, _>>()?,
            has_more: rows.has_more,
        }))
    }

    async fn delete_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError> {
        let (tenant, cid, fid) = (
            tenant.to_owned(),
            container_id.to_owned(),
            file_id.to_owned(),
        );
        on_writer(&self.writer, move |conn| {
            let n = conn
                .prepare_cached(
                    "DELETE FROM container_files WHERE id = ?1 AND container_id = ?2 AND \
                     container_id IN (SELECT id FROM containers WHERE tenant = ?3)",
                )
                .and_then(|mut s| s.execute(params![fid, cid, tenant]))
                .map_err(backend)?;
            Ok(n > 0)
        })
        .await
    }

    async fn expire_containers(&self, now: u64) -> Result<Vec<ExpiredContainer>, StoreError> {
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let due: Vec<ExpiredContainer> = tx
                .prepare_cached(
                    "UPDATE containers SET status = ?2 WHERE status = ?3 \
                     AND expires_minutes IS NOT NULL \
                     AND IFNULL(last_active_at, created_at) + expires_minutes * 60 <= ?1 \
                     RETURNING tenant, id",
                )
                .and_then(|mut s| {
                    s.query_map(params![i64_of(now), EXPIRED, RUNNING], |r| {
                        Ok(ExpiredContainer {
                            tenant: r.get(0)?,
                            id: r.get(1)?,
                        })
                    })?
                    .collect()
                })
                .map_err(backend)?;
            for c in &due {
                tx.execute(
                    "DELETE FROM container_files WHERE container_id = ?1",
                    [&c.id],
                )
                .map_err(backend)?;
            }
            tx.commit().map_err(backend)?;
            Ok(due)
        })
        .await
    }
}

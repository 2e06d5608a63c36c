//! Vector stores on SQLite: stores, attachments and batches. Ingestion's
//! claims and writes are in `ingestion.rs`, search in `vector_search.rs`.

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use windlass_engine::{
    Attached, ChunkQuery, ExpiredVectorStore, FileFilter, IngestionJob, IngestionOutcome,
    ListRequest, NewAttachment, NewBatch, NewVectorStore, Page, Searched, StoreError,
    VectorStoreStore, VectorStoreUpdate,
};
use windlass_protocol::{Attributes, VectorStore, VectorStoreFile, VectorStoreFileBatch};

use super::files::cursor;
use super::vector_rows::{
    attachment_seq, complete, file_row, get_batch, get_file, get_store, store_row, store_seq,
    FILE_COLUMNS, STORE_COLUMNS,
};
use super::write::on_writer;
use super::SqliteStore;
use crate::codec::backend;
use crate::retrieval::paging::Window;
use crate::retrieval::records::{encode_attributes, encode_metadata, to_i64, FileRow};

fn immediate(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)
}

fn list_stores(
    conn: &Connection,
    tenant: &str,
    page: &ListRequest,
) -> Result<Page<VectorStore>, StoreError> {
    let seq = |id: &str| store_seq(conn, tenant, id);
    let w = Window::new(
        page,
        cursor(seq, page.after.as_ref())?,
        cursor(seq, page.before.as_ref())?,
    );
    let sql = format!(
        "SELECT {STORE_COLUMNS} FROM vector_stores WHERE tenant = ?1 \
         AND (?2 IS NULL OR seq > ?2) AND (?3 IS NULL OR seq < ?3) ORDER BY seq {} LIMIT ?4",
        w.direction()
    );
    let rows = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map(params![tenant, w.above, w.below, w.fetch], store_row)?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(backend)?;
    let page = w.page(rows);
    Ok(Page {
        data: page
            .data
            .into_iter()
            .map(|r| complete(conn, r))
            .collect::<Result<_, _>>()?,
        has_more: page.has_more,
    })
}

fn list_files(
    conn: &Connection,
    tenant: &str,
    store: &str,
    filter: &FileFilter,
    page: &ListRequest,
) -> Result<Option<Page<VectorStoreFile>>, StoreError> {
    if store_seq(conn, tenant, store)?.is_none() {
        return Ok(None);
    }
    let seq = |id: &str| attachment_seq(conn, tenant, store, id);
    let w = Window::new(
        page,
        cursor(seq, page.after.as_ref())?,
        cursor(seq, page.before.as_ref())?,
    );
    let sql = format!(
        "SELECT {FILE_COLUMNS} FROM vector_store_files f WHERE f.vector_store_id = ?1 \
         AND (?2 IS NULL OR f.status = ?2) AND (?3 IS NULL OR f.batch_id = ?3) \
         AND (?4 IS NULL OR f.seq > ?4) AND (?5 IS NULL OR f.seq < ?5) \
         ORDER BY f.seq {} LIMIT ?6",
        w.direction()
    );
    let status = filter.status.map(|s| s.as_str());
    let rows = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map(
                params![store, status, filter.batch_id, w.above, w.below, w.fetch],
                file_row,
            )?
            .collect::<Result<Vec<_>, _>>()
        })
        .map_err(backend)?;
    let page = w.page(rows);
    Ok(Some(Page {
        data: page
            .data
            .into_iter()
            .map(FileRow::into_object)
            .collect::<Result<_, _>>()?,
        has_more: page.has_more,
    }))
}

/// Deletes the chunks of the attachments `condition` selects (`?1` bound).
fn delete_chunks(tx: &Connection, condition: &str, key: &str) -> Result<(), StoreError> {
    tx.execute(
        &format!(
            "DELETE FROM vector_store_chunks WHERE attachment IN \
             (SELECT seq FROM vector_store_files WHERE {condition})"
        ),
        [key],
    )
    .map(drop)
    .map_err(backend)
}

/// Attaches one file in the open transaction (see the trait for the rules).
fn attach_one(
    tx: &Transaction<'_>,
    store: &str,
    file: &NewAttachment,
    batch: Option<&str>,
    now: u64,
) -> Result<(), StoreError> {
    let existing: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT seq, status FROM vector_store_files WHERE vector_store_id = ?1 AND file_id = ?2",
        )
        .and_then(|mut s| {
            s.query_row(params![store, file.file_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(backend)?;
    let attributes = encode_attributes(file.attributes.as_ref())?;
    let (max, overlap) = (
        i64::from(file.chunking.max_chunk_size_tokens),
        i64::from(file.chunking.chunk_overlap_tokens),
    );
    match existing {
        None => tx
            .execute(
                "INSERT INTO vector_store_files (vector_store_id, file_id, batch_id, created_at, \
                 status, attributes, max_chunk_tokens, chunk_overlap_tokens) \
                 VALUES (?1, ?2, ?3, ?4, 'in_progress', ?5, ?6, ?7)",
                params![
                    store,
                    file.file_id,
                    batch,
                    to_i64(now),
                    attributes,
                    max,
                    overlap
                ],
            )
            .map(drop),
        Some((seq, status)) if status == "failed" || status == "cancelled" => {
            tx.execute(
                "DELETE FROM vector_store_chunks WHERE attachment = ?1",
                [seq],
            )
            .map_err(backend)?;
            tx.execute(
                "UPDATE vector_store_files SET status = 'in_progress', last_error = NULL, \
                 usage_bytes = 0, attributes = ?2, max_chunk_tokens = ?3, \
                 chunk_overlap_tokens = ?4, batch_id = IFNULL(?5, batch_id), claimed_by = NULL, \
                 claimed_until = NULL WHERE seq = ?1",
                params![seq, attributes, max, overlap, batch],
            )
            .map(drop)
        }
        Some((seq, _)) => tx
            .execute(
                "UPDATE vector_store_files SET batch_id = IFNULL(?2, batch_id) WHERE seq = ?1",
                params![seq, batch],
            )
            .map(drop),
    }
    .map_err(backend)
}

fn attach(
    conn: &mut Connection,
    tenant: &str,
    store: &str,
    files: &[NewAttachment],
    batch: Option<&NewBatch>,
    now: u64,
) -> Result<Attached<Vec<VectorStoreFile>>, StoreError> {
    let tx = immediate(conn)?;
    if store_seq(&tx, tenant, store)?.is_none() {
        return Ok(Attached::UnknownStore);
    }
    if super::vector_expiry::is_expired(&tx, store, now)? {
        return Ok(Attached::Expired);
    }
    for f in files {
        if super::files::file_seq(&tx, tenant, &f.file_id)?.is_none() {
            return Ok(Attached::UnknownFile(f.file_id.clone()));
        }
    }
    if let Some(b) = batch {
        tx.execute(
            "INSERT INTO vector_store_batches (id, vector_store_id, created_at) VALUES (?1, ?2, ?3)",
            params![b.id, store, to_i64(b.created_at)],
        )
        .map_err(backend)?;
    }
    for f in files {
        attach_one(&tx, store, f, batch.map(|b| b.id.as_str()), now)?;
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        out.extend(get_file(&tx, tenant, store, &f.file_id)?);
    }
    tx.commit().map_err(backend)?;
    Ok(Attached::Done(out))
}

fn update_store(
    conn: &mut Connection,
    tenant: &str,
    id: &str,
    u: &VectorStoreUpdate,
) -> Result<Option<VectorStore>, StoreError> {
    let tx = immediate(conn)?;
    if store_seq(&tx, tenant, id)?.is_none() {
        return Ok(None);
    }
    if let Some(name) = &u.name {
        tx.execute(
            "UPDATE vector_stores SET name = ?2 WHERE id = ?1",
            params![id, name],
        )
        .map_err(backend)?;
    }
    if let Some(description) = &u.description {
        tx.execute(
            "UPDATE vector_stores SET description = ?2 WHERE id = ?1",
            params![id, description],
        )
        .map_err(backend)?;
    }
    if let Some(expires) = &u.expires_after {
        let days = expires.as_ref().map(|e| i64::from(e.days));
        tx.execute(
            "UPDATE vector_stores SET expires_after_days = ?2 WHERE id = ?1",
            params![id, days],
        )
        .map_err(backend)?;
    }
    if let Some(metadata) = &u.metadata {
        tx.execute(
            "UPDATE vector_stores SET metadata = ?2 WHERE id = ?1",
            params![id, encode_metadata(metadata)?],
        )
        .map_err(backend)?;
    }
    let out = get_store(&tx, tenant, id)?;
    tx.commit().map_err(backend)?;
    Ok(out)
}

fn delete_store(conn: &mut Connection, tenant: &str, id: &str) -> Result<bool, StoreError> {
    let tx = immediate(conn)?;
    if store_seq(&tx, tenant, id)?.is_none() {
        return Ok(false);
    }
    delete_chunks(&tx, "vector_store_id = ?1", id)?;
    for sql in [
        "DELETE FROM vector_store_files WHERE vector_store_id = ?1",
        "DELETE FROM vector_store_batches WHERE vector_store_id = ?1",
        "DELETE FROM vector_stores WHERE id = ?1",
    ] {
        tx.execute(sql, [id]).map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn detach(
    conn: &mut Connection,
    tenant: &str,
    store: &str,
    file: &str,
) -> Result<bool, StoreError> {
    let tx = immediate(conn)?;
    let Some(seq) = attachment_seq(&tx, tenant, store, file)? else {
        return Ok(false);
    };
    tx.execute(
        "DELETE FROM vector_store_chunks WHERE attachment = ?1",
        [seq],
    )
    .map_err(backend)?;
    tx.execute("DELETE FROM vector_store_files WHERE seq = ?1", [seq])
        .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn cancel_batch(
    conn: &mut Connection,
    tenant: &str,
    store: &str,
    batch: &str,
) -> Result<Option<VectorStoreFileBatch>, StoreError> {
    let tx = immediate(conn)?;
    if get_batch(&tx, tenant, store, batch)?.is_none() {
        return Ok(None);
    }
    tx.execute(
        "UPDATE vector_store_batches SET cancelled = 1 WHERE id = ?1",
        [batch],
    )
    .map_err(backend)?;
    tx.execute(
        "UPDATE vector_store_files SET status = 'cancelled', claimed_by = NULL, \
         claimed_until = NULL WHERE batch_id = ?1 AND status = 'in_progress'",
        [batch],
    )
    .map_err(backend)?;
    let out = get_batch(&tx, tenant, store, batch)?;
    tx.commit().map_err(backend)?;
    Ok(out)
}

fn chunks(
    conn: &Connection,
    tenant: &str,
    store: &str,
    file: &str,
) -> Result<Option<Vec<String>>, StoreError> {
    let Some(seq) = attachment_seq(conn, tenant, store, file)? else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT text FROM vector_store_chunks WHERE attachment = ?1 ORDER BY position",
        )
        .map_err(backend)?;
    let texts = stmt
        .query_map([seq], |r| r.get(0))
        .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
        .map_err(backend)?;
    Ok(Some(texts))
}

#[async_trait::async_trait]
impl VectorStoreStore for SqliteStore {
    async fn create_vector_store(
        &self,
        tenant: &str,
        new: &NewVectorStore,
    ) -> Result<VectorStore, StoreError> {
        let (tenant, new) = (tenant.to_owned(), new.clone());
        let metadata = encode_metadata(&new.metadata)?;
        on_writer(&self.writer, move |conn| {
            conn.execute(
                "INSERT INTO vector_stores (id, tenant, name, created_at, last_active_at, \
                 metadata, expires_after_days, embedding_model, description) \
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8)",
                params![
                    new.id,
                    tenant,
                    new.name,
                    to_i64(new.created_at),
                    metadata,
                    new.expires_after.as_ref().map(|e| i64::from(e.days)),
                    new.embedding_model,
                    new.description
                ],
            )
            .map_err(|e| match crate::codec::is_unique_violation(&e) {
                true => StoreError::Duplicate(new.id.clone()),
                false => backend(e),
            })?;
            get_store(conn, &tenant, &new.id)?
                .ok_or_else(|| StoreError::Backend("vector store vanished after insert".into()))
        })
        .await
    }

    async fn get_vector_store(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<VectorStore>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        get_store(conn.conn()?, tenant, id)
    }

    async fn list_vector_stores(
        &self,
        tenant: &str,
        page: &ListRequest,
    ) -> Result<Page<VectorStore>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        list_stores(conn.conn()?, tenant, page)
    }

    async fn update_vector_store(
        &self,
        tenant: &str,
        id: &str,
        update: &VectorStoreUpdate,
    ) -> Result<Option<VectorStore>, StoreError> {
        let (tenant, id, update) = (tenant.to_owned(), id.to_owned(), update.clone());
        on_writer(&self.writer, move |conn| {
            update_store(conn, &tenant, &id, &update)
        })
        .await
    }

    async fn delete_vector_store(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| delete_store(conn, &tenant, &id)).await
    }

    async fn touch_vector_stores(
        &self,
        tenant: &str,
        ids: &[String],
        now: u64,
    ) -> Result<(), StoreError> {
        let ids = serde_json::to_string(ids).map_err(|e| StoreError::Backend(e.to_string()))?;
        let tenant = tenant.to_owned();
        on_writer(&self.writer, move |conn| {
            conn.execute(
                "UPDATE vector_stores SET last_active_at = MAX(last_active_at, ?3) \
                 WHERE tenant = ?1 AND id IN (SELECT value FROM json_each(?2)) \
                 AND expired_at IS NULL AND (expires_after_days IS NULL \
                     OR last_active_at + expires_after_days * 86400 > ?3)",
                params![tenant, ids, to_i64(now)],
            )
            .map(drop)
            .map_err(backend)
        })
        .await
    }

    async fn attach_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        files: &[NewAttachment],
        batch: Option<&NewBatch>,
        now: u64,
    ) -> Result<Attached<Vec<VectorStoreFile>>, StoreError> {
        let (tenant, store) = (tenant.to_owned(), vector_store_id.to_owned());
        let (files, batch) = (files.to_vec(), batch.cloned());
        on_writer(&self.writer, move |conn| {
            attach(conn, &tenant, &store, &files, batch.as_ref(), now)
        })
        .await
    }

    async fn get_vector_store_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<VectorStoreFile>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        get_file(conn.conn()?, tenant, vector_store_id, file_id)
    }

    async fn list_vector_store_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        filter: &FileFilter,
        page: &ListRequest,
    ) -> Result<Option<Page<VectorStoreFile>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        list_files(conn.conn()?, tenant, vector_store_id, filter, page)
    }

    async fn update_file_attributes(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
        attributes: Option<&Attributes>,
    ) -> Result<Option<VectorStoreFile>, StoreError> {
        let attributes = encode_attributes(attributes)?;
        let (tenant, store, file) = (
            tenant.to_owned(),
            vector_store_id.to_owned(),
            file_id.to_owned(),
        );
        on_writer(&self.writer, move |conn| {
            let Some(seq) = attachment_seq(conn, &tenant, &store, &file)? else {
                return Ok(None);
            };
            conn.execute(
                "UPDATE vector_store_files SET attributes = ?2 WHERE seq = ?1",
                params![seq, attributes],
            )
            .map_err(backend)?;
            get_file(conn, &tenant, &store, &file)
        })
        .await
    }

    async fn detach_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError> {
        let (tenant, store, file) = (
            tenant.to_owned(),
            vector_store_id.to_owned(),
            file_id.to_owned(),
        );
        on_writer(&self.writer, move |conn| {
            detach(conn, &tenant, &store, &file)
        })
        .await
    }

    async fn file_chunks(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        chunks(conn.conn()?, tenant, vector_store_id, file_id)
    }

    async fn get_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        get_batch(conn.conn()?, tenant, vector_store_id, batch_id)
    }

    async fn cancel_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError> {
        let (tenant, store, batch) = (
            tenant.to_owned(),
            vector_store_id.to_owned(),
            batch_id.to_owned(),
        );
        on_writer(&self.writer, move |conn| {
            cancel_batch(conn, &tenant, &store, &batch)
        })
        .await
    }

    async fn claim_ingestions(
        &self,
        worker: &str,
        now: u64,
        lease_secs: u64,
        limit: usize,
    ) -> Result<Vec<IngestionJob>, StoreError> {
        let worker = worker.to_owned();
        on_writer(&self.writer, move |conn| {
            super::ingestion::claim(conn, &worker, now, lease_secs, limit)
        })
        .await
    }

    async fn renew_ingestion_claims(&self, worker: &str, until: u64) -> Result<(), StoreError> {
        let worker = worker.to_owned();
        on_writer(&self.writer, move |conn| {
            super::ingestion::renew(conn, &worker, until)
        })
        .await
    }

    async fn finish_ingestion(
        &self,
        job: &IngestionJob,
        outcome: &IngestionOutcome,
    ) -> Result<bool, StoreError> {
        let (job, outcome) = (job.clone(), outcome.clone());
        on_writer(&self.writer, move |conn| {
            super::ingestion::finish(conn, &job, &outcome)
        })
        .await
    }

    async fn expire_vector_stores(&self, now: u64) -> Result<Vec<ExpiredVectorStore>, StoreError> {
        on_writer(&self.writer, move |conn| {
            super::vector_expiry::expire(conn, now)
        })
        .await
    }

    async fn search(&self, tenant: &str, query: &ChunkQuery) -> Result<Searched, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        super::vector_search::search(conn.conn()?, tenant, query)
    }
}

//! Vector stores on Postgres: stores, attachments and batches. Writes that
//! change a store's files lock its row first, so they serialize per store;
//! ingestion is in `ingestion.rs`, search in `vector_search.rs`.

use deadpool_postgres::GenericClient;
use windlass_engine::{
    Attached, ChunkQuery, ExpiredVectorStore, FileFilter, IngestionJob, IngestionOutcome,
    ListRequest, NewAttachment, NewBatch, NewVectorStore, Page, Searched, StoreError,
    VectorStoreStore, VectorStoreUpdate,
};
use windlass_protocol::{Attributes, VectorStore, VectorStoreFile, VectorStoreFileBatch};

use super::error::backend;
use super::files::{cursor, file_seq};
use super::vector_rows::{
    attachment_seq, complete, file_row, get_batch, get_file, get_store, store_row, store_seq,
    FILE_COLUMNS, STORE_COLUMNS,
};
use super::PgStore;
use crate::retrieval::paging::Window;
use crate::retrieval::records::{encode_attributes, encode_metadata, to_i64};

/// Attaches one file (see the port for the rules): new, re-attached after
/// a failure or cancellation, or kept as it is.
const ATTACH: &str = "\
INSERT INTO vector_store_files AS f (vector_store_id, file_id, batch_id, created_at, status, \
    attributes, max_chunk_tokens, chunk_overlap_tokens) \
VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7) \
ON CONFLICT (vector_store_id, file_id) DO UPDATE SET \
    batch_id = COALESCE(EXCLUDED.batch_id, f.batch_id), \
    attributes = CASE WHEN f.status IN ('failed', 'cancelled') THEN EXCLUDED.attributes ELSE f.attributes END, \
    max_chunk_tokens = CASE WHEN f.status IN ('failed', 'cancelled') THEN EXCLUDED.max_chunk_tokens ELSE f.max_chunk_tokens END, \
    chunk_overlap_tokens = CASE WHEN f.status IN ('failed', 'cancelled') THEN EXCLUDED.chunk_overlap_tokens ELSE f.chunk_overlap_tokens END, \
    usage_bytes = CASE WHEN f.status IN ('failed', 'cancelled') THEN 0 ELSE f.usage_bytes END, \
    last_error = CASE WHEN f.status IN ('failed', 'cancelled') THEN NULL ELSE f.last_error END, \
    claimed_by = CASE WHEN f.status IN ('failed', 'cancelled') THEN NULL ELSE f.claimed_by END, \
    claimed_until = CASE WHEN f.status IN ('failed', 'cancelled') THEN NULL ELSE f.claimed_until END, \
    status = CASE WHEN f.status IN ('failed', 'cancelled') THEN 'in_progress' ELSE f.status END";

async fn list_stores(
    conn: &impl GenericClient,
    tenant: &str,
    page: &ListRequest,
) -> Result<Page<VectorStore>, StoreError> {
    let mut bounds = [None, None];
    for (slot, id) in bounds.iter_mut().zip([&page.after, &page.before]) {
        if let Some(id) = id {
            *slot = cursor(Some(id), store_seq(conn, tenant, id, false).await?)?;
        }
    }
    let w = Window::new(page, bounds[0], bounds[1]);
    let sql = format!(
        "SELECT {STORE_COLUMNS} FROM vector_stores WHERE tenant = $1 \
         AND ($2::bigint IS NULL OR seq > $2) AND ($3::bigint IS NULL OR seq < $3) \
         ORDER BY seq {} LIMIT $4",
        w.direction()
    );
    let rows = conn
        .query(&sql, &[&tenant, &w.above, &w.below, &w.fetch])
        .await
        .map_err(backend)?;
    let page = w.page(rows);
    let mut data = Vec::with_capacity(page.data.len());
    for r in &page.data {
        data.push(complete(conn, store_row(r)).await?);
    }
    Ok(Page {
        data,
        has_more: page.has_more,
    })
}

async fn list_files(
    conn: &impl GenericClient,
    tenant: &str,
    store: &str,
    filter: &FileFilter,
    page: &ListRequest,
) -> Result<Option<Page<VectorStoreFile>>, StoreError> {
    if store_seq(conn, tenant, store, false).await?.is_none() {
        return Ok(None);
    }
    let mut bounds = [None, None];
    for (slot, id) in bounds.iter_mut().zip([&page.after, &page.before]) {
        if let Some(id) = id {
            *slot = cursor(Some(id), attachment_seq(conn, tenant, store, id).await?)?;
        }
    }
    let w = Window::new(page, bounds[0], bounds[1]);
    let sql = format!(
        "SELECT {FILE_COLUMNS} FROM vector_store_files f WHERE f.vector_store_id = $1 \
         AND ($2::text IS NULL OR f.status = $2) AND ($3::text IS NULL OR f.batch_id = $3) \
         AND ($4::bigint IS NULL OR f.seq > $4) AND ($5::bigint IS NULL OR f.seq < $5) \
         ORDER BY f.seq {} LIMIT $6",
        w.direction()
    );
    let status = filter.status.map(|s| s.as_str());
    let rows = conn
        .query(
            &sql,
            &[
                &store,
                &status,
                &filter.batch_id,
                &w.above,
                &w.below,
                &w.fetch,
            ],
        )
        .await
        .map_err(backend)?;
    let page = w.page(rows);
    Ok(Some(Page {
        data: page
            .data
            .iter()
            .map(|r| file_row(r).into_object())
            .collect::<Result<_, _>>()?,
        has_more: page.has_more,
    }))
}

async fn attach(
    conn: &mut deadpool_postgres::Object,
    tenant: &str,
    store: &str,
    files: &[NewAttachment],
    batch: Option<&NewBatch>,
    now: u64,
) -> Result<Attached<Vec<VectorStoreFile>>, StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    if store_seq(&tx, tenant, store, true).await?.is_none() {
        return Ok(Attached::UnknownStore);
    }
    if super::vector_expiry::is_expired(&tx, store, now).await? {
        return Ok(Attached::Expired);
    }
    for f in files {
        if file_seq(&tx, tenant, &f.file_id).await?.is_none() {
            return Ok(Attached::UnknownFile(f.file_id.clone()));
        }
    }
    if let Some(b) = batch {
        tx.execute(
            "INSERT INTO vector_store_batches (id, vector_store_id, created_at) VALUES ($1, $2, $3)",
            &[&b.id, &store, &to_i64(b.created_at)],
        )
        .await
        .map_err(backend)?;
    }
    let batch_id = batch.map(|b| b.id.as_str());
    for f in files {
        let attributes = encode_attributes(f.attributes.as_ref())?;
        let (max, overlap) = (
            i64::from(f.chunking.max_chunk_size_tokens),
            i64::from(f.chunking.chunk_overlap_tokens),
        );
        tx.execute(
            ATTACH,
            &[
                &store,
                &f.file_id,
                &batch_id,
                &to_i64(now),
                &attributes,
                &max,
                &overlap,
            ],
        )
        .await
        .map_err(backend)?;
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        out.extend(get_file(&tx, tenant, store, &f.file_id).await?);
    }
    tx.commit().await.map_err(backend)?;
    Ok(Attached::Done(out))
}

async fn update_store(
    conn: &mut deadpool_postgres::Object,
    tenant: &str,
    id: &str,
    u: &VectorStoreUpdate,
) -> Result<Option<VectorStore>, StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    if store_seq(&tx, tenant, id, true).await?.is_none() {
        return Ok(None);
    }
    if let Some(name) = &u.name {
        tx.execute(
            "UPDATE vector_stores SET name = $2 WHERE id = $1",
            &[&id, name],
        )
        .await
        .map_err(backend)?;
    }
    if let Some(description) = &u.description {
        tx.execute(
            "UPDATE vector_stores SET description = $2 WHERE id = $1",
            &[&id, description],
        )
        .await
        .map_err(backend)?;
    }
    if let Some(expires) = &u.expires_after {
        let days = expires.as_ref().map(|e| i64::from(e.days));
        tx.execute(
            "UPDATE vector_stores SET expires_after_days = $2 WHERE id = $1",
            &[&id, &days],
        )
        .await
        .map_err(backend)?;
    }
    if let Some(metadata) = &u.metadata {
        tx.execute(
            "UPDATE vector_stores SET metadata = $2 WHERE id = $1",
            &[&id, &encode_metadata(metadata)?],
        )
        .await
        .map_err(backend)?;
    }
    let out = get_store(&tx, tenant, id).await?;
    tx.commit().await.map_err(backend)?;
    Ok(out)
}

/// Runs `statements` (each with `$1` = `key`) in one transaction after
/// checking the owner with `check` (`$1` = key, `$2` = tenant, locking).
async fn delete_in_tx(
    conn: &mut deadpool_postgres::Object,
    check: &str,
    key: &str,
    tenant: &str,
    statements: &[&str],
) -> Result<bool, StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    if tx
        .query_opt(check, &[&key, &tenant])
        .await
        .map_err(backend)?
        .is_none()
    {
        return Ok(false);
    }
    for sql in statements {
        tx.execute(*sql, &[&key]).await.map_err(backend)?;
    }
    tx.commit().await.map_err(backend)?;
    Ok(true)
}

#[async_trait::async_trait]
impl VectorStoreStore for PgStore {
    async fn create_vector_store(
        &self,
        tenant: &str,
        new: &NewVectorStore,
    ) -> Result<VectorStore, StoreError> {
        let conn = self.conn().await?;
        let metadata = encode_metadata(&new.metadata)?;
        let days = new.expires_after.as_ref().map(|e| i64::from(e.days));
        let r = conn
            .execute(
                "INSERT INTO vector_stores (id, tenant, name, created_at, last_active_at, metadata, \
                 expires_after_days, embedding_model, description) \
                 VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8)",
                &[
                    &new.id,
                    &tenant,
                    &new.name,
                    &to_i64(new.created_at),
                    &metadata,
                    &days,
                    &new.embedding_model,
                    &new.description,
                ],
            )
            .await;
        match r {
            Ok(_) => {}
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                return Err(StoreError::Duplicate(new.id.clone()))
            }
            Err(e) => return Err(backend(e)),
        }
        get_store(&conn, tenant, &new.id)
            .await?
            .ok_or_else(|| StoreError::Backend("vector store vanished after insert".into()))
    }

    async fn get_vector_store(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<VectorStore>, StoreError> {
        get_store(&self.conn().await?, tenant, id).await
    }

    async fn list_vector_stores(
        &self,
        tenant: &str,
        page: &ListRequest,
    ) -> Result<Page<VectorStore>, StoreError> {
        list_stores(&self.conn().await?, tenant, page).await
    }

    async fn update_vector_store(
        &self,
        tenant: &str,
        id: &str,
        update: &VectorStoreUpdate,
    ) -> Result<Option<VectorStore>, StoreError> {
        update_store(&mut self.conn().await?, tenant, id, update).await
    }

    async fn delete_vector_store(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        delete_in_tx(
            &mut self.conn().await?,
            "SELECT 1 FROM vector_stores WHERE id = $1 AND tenant = $2 FOR UPDATE",
            id,
            tenant,
            &[
                "DELETE FROM vector_store_chunks WHERE attachment IN \
                 (SELECT seq FROM vector_store_files WHERE vector_store_id = $1)",
                "DELETE FROM vector_store_files WHERE vector_store_id = $1",
                "DELETE FROM vector_store_batches WHERE vector_store_id = $1",
                "DELETE FROM vector_stores WHERE id = $1",
            ],
        )
        .await
    }

    async fn touch_vector_stores(
        &self,
        tenant: &str,
        ids: &[String],
        now: u64,
    ) -> Result<(), StoreError> {
        self.conn()
            .await?
            .execute(
                "UPDATE vector_stores SET last_active_at = GREATEST(last_active_at, $3) \
                 WHERE tenant = $1 AND id = ANY($2) AND expired_at IS NULL \
                 AND (expires_after_days IS NULL \
                      OR last_active_at + expires_after_days * 86400 > $3)",
                &[&tenant, &ids, &to_i64(now)],
            )
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn attach_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        files: &[NewAttachment],
        batch: Option<&NewBatch>,
        now: u64,
    ) -> Result<Attached<Vec<VectorStoreFile>>, StoreError> {
        attach(
            &mut self.conn().await?,
            tenant,
            vector_store_id,
            files,
            batch,
            now,
        )
        .await
    }

    async fn get_vector_store_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<VectorStoreFile>, StoreError> {
        get_file(&self.conn().await?, tenant, vector_store_id, file_id).await
    }

    async fn list_vector_store_files(
        &self,
        tenant: &str,
        vector_store_id: &str,
        filter: &FileFilter,
        page: &ListRequest,
    ) -> Result<Option<Page<VectorStoreFile>>, StoreError> {
        list_files(&self.conn().await?, tenant, vector_store_id, filter, page).await
    }

    async fn update_file_attributes(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
        attributes: Option<&Attributes>,
    ) -> Result<Option<VectorStoreFile>, StoreError> {
        let conn = self.conn().await?;
        let Some(seq) = attachment_seq(&conn, tenant, vector_store_id, file_id).await? else {
            return Ok(None);
        };
        conn.execute(
            "UPDATE vector_store_files SET attributes = $2 WHERE seq = $1",
            &[&seq, &encode_attributes(attributes)?],
        )
        .await
        .map_err(backend)?;
        get_file(&conn, tenant, vector_store_id, file_id).await
    }

    async fn detach_file(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        let tx = conn.transaction().await.map_err(backend)?;
        if store_seq(&tx, tenant, vector_store_id, true)
            .await?
            .is_none()
        {
            return Ok(false);
        }
        let Some(seq) = attachment_seq(&tx, tenant, vector_store_id, file_id).await? else {
            return Ok(false);
        };
        for sql in [
            "DELETE FROM vector_store_chunks WHERE attachment = $1",
            "DELETE FROM vector_store_files WHERE seq = $1",
        ] {
            tx.execute(sql, &[&seq]).await.map_err(backend)?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn file_chunks(
        &self,
        tenant: &str,
        vector_store_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let conn = self.conn().await?;
        let Some(seq) = attachment_seq(&conn, tenant, vector_store_id, file_id).await? else {
            return Ok(None);
        };
        let rows = conn
            .query(
                "SELECT text FROM vector_store_chunks WHERE attachment = $1 ORDER BY position",
                &[&seq],
            )
            .await
            .map_err(backend)?;
        Ok(Some(rows.iter().map(|r| r.get(0)).collect()))
    }

    async fn get_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError> {
        get_batch(&self.conn().await?, tenant, vector_store_id, batch_id).await
    }

    async fn cancel_file_batch(
        &self,
        tenant: &str,
        vector_store_id: &str,
        batch_id: &str,
    ) -> Result<Option<VectorStoreFileBatch>, StoreError> {
        let mut conn = self.conn().await?;
        let tx = conn.transaction().await.map_err(backend)?;
        if store_seq(&tx, tenant, vector_store_id, true)
            .await?
            .is_none()
            || get_batch(&tx, tenant, vector_store_id, batch_id)
                .await?
                .is_none()
        {
            return Ok(None);
        }
        tx.execute(
            "UPDATE vector_store_batches SET cancelled = TRUE WHERE id = $1",
            &[&batch_id],
        )
        .await
        .map_err(backend)?;
        tx.execute(
            "UPDATE vector_store_files SET status = 'cancelled', claimed_by = NULL, \
             claimed_until = NULL WHERE batch_id = $1 AND status = 'in_progress'",
            &[&batch_id],
        )
        .await
        .map_err(backend)?;
        let out = get_batch(&tx, tenant, vector_store_id, batch_id).await?;
        tx.commit().await.map_err(backend)?;
        Ok(out)
    }

    async fn claim_ingestions(
        &self,
        worker: &str,
        now: u64,
        lease_secs: u64,
        limit: usize,
    ) -> Result<Vec<IngestionJob>, StoreError> {
        super::ingestion::claim(&self.conn().await?, worker, now, lease_secs, limit).await
    }

    async fn renew_ingestion_claims(&self, worker: &str, until: u64) -> Result<(), StoreError> {
        self.conn()
            .await?
            .execute(
                "UPDATE vector_store_files SET claimed_until = $2 \
                 WHERE claimed_by = $1 AND status = 'in_progress'",
                &[&worker, &to_i64(until)],
            )
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn finish_ingestion(
        &self,
        job: &IngestionJob,
        outcome: &IngestionOutcome,
    ) -> Result<bool, StoreError> {
        super::ingestion::finish(
            &mut self.conn().await?,
            self.vector.as_deref(),
            job,
            outcome,
        )
        .await
    }

    async fn expire_vector_stores(&self, now: u64) -> Result<Vec<ExpiredVectorStore>, StoreError> {
        super::vector_expiry::expire(&mut self.conn().await?, now).await
    }

    async fn search(&self, tenant: &str, query: &ChunkQuery) -> Result<Searched, StoreError> {
        super::vector_search::search(
            &mut self.conn().await?,
            self.vector.as_deref(),
            tenant,
            query,
        )
        .await
    }
}

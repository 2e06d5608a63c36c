//! Files of a vector store and file batches (OpenAI's shapes): attach a
//! file (`attributes`, `chunking_strategy`), list by `filter` status,
//! retrieve, update attributes, detach, the parsed chunks (`/content`);
//! batches: create, retrieve, cancel, list their files. An attached file is
//! `in_progress` until the background worker ends it `completed` or
//! `failed` with `last_error`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use windlass_engine::{Attached, FileFilter, NewAttachment, NewBatch};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    check_attributes, Attributes, ChunkingStrategy, CreateFileBatchRequest,
    CreateVectorStoreFileRequest, Deleted, FileContentPage, ListPage, TextContent,
    UpdateVectorStoreFileRequest, VectorStoreFile, VectorStoreFileBatch, VectorStoreFileStatus,
    OBJECT_FILE_CONTENT_PAGE, OBJECT_VECTOR_STORE_FILE_DELETED,
};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::resources::{
    cursor_error, enabled, now_secs, vector_store_expired, PageQuery, Resources,
};
use crate::state::AppState;

/// Most files in one batch (OpenAI's limit).
const MAX_BATCH: usize = 500;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/vector_stores/{id}/files", get(list).post(attach))
        .route(
            "/vector_stores/{id}/files/{file_id}",
            get(retrieve).post(update).delete(detach),
        )
        .route("/vector_stores/{id}/files/{file_id}/content", get(content))
        .route("/vector_stores/{id}/file_batches", post(create_batch))
        .route(
            "/vector_stores/{id}/file_batches/{batch_id}",
            get(get_batch),
        )
        .route(
            "/vector_stores/{id}/file_batches/{batch_id}/cancel",
            post(cancel_batch),
        )
        .route(
            "/vector_stores/{id}/file_batches/{batch_id}/files",
            get(list_batch_files),
        )
}

fn resources(app: &AppState) -> Result<&Arc<Resources>, ApiError> {
    enabled(app.resources.as_ref(), "Vector stores")
}

fn store_not_found(id: &str) -> ApiError {
    ApiError::not_found("Vector store", id).param("vector_store_id")
}

fn file_not_found(id: &str) -> ApiError {
    ApiError::not_found("Vector store file", id).param("file_id")
}

fn batch_not_found(id: &str) -> ApiError {
    ApiError::not_found("Vector store file batch", id).param("batch_id")
}

fn checked_attributes(a: Option<Attributes>) -> Result<Option<Attributes>, ApiError> {
    if let Some(a) = &a {
        check_attributes(a).map_err(|m| ApiError::invalid(m).param("attributes"))?;
    }
    Ok(a)
}

/// A file to attach, checked.
fn attachment(req: CreateVectorStoreFileRequest) -> Result<NewAttachment, ApiError> {
    let strategy = req.chunking_strategy.unwrap_or(ChunkingStrategy::Auto);
    strategy
        .check()
        .map_err(|m| ApiError::invalid(m).param("chunking_strategy"))?;
    Ok(NewAttachment {
        file_id: req.file_id,
        attributes: checked_attributes(req.attributes)?,
        chunking: strategy.resolve(),
    })
}

/// Attaches `files` (all or none) and wakes the worker.
async fn attach_all(
    res: &Resources,
    tenant: &Tenant,
    store: &str,
    files: &[NewAttachment],
    batch: Option<&NewBatch>,
) -> Result<Vec<VectorStoreFile>, ApiError> {
    let attached = res
        .vector_stores
        .attach_files(tenant.as_str(), store, files, batch, now_secs())
        .await?;
    match attached {
        Attached::Done(files) => {
            res.wake_ingestion();
            Ok(files)
        }
        Attached::UnknownStore => Err(store_not_found(store)),
        Attached::Expired => Err(vector_store_expired(store, "given files")),
        Attached::UnknownFile(id) => Err(ApiError::not_found("File", &id).param("file_id")),
    }
}

async fn attach(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<VectorStoreFile>, ApiError> {
    let res = resources(&app)?;
    let req: CreateVectorStoreFileRequest = parse_json(&body.map_err(body_error)?)?;
    let new = attachment(req)?;
    let mut files = attach_all(res, &tenant, &id, std::slice::from_ref(&new), None).await?;
    files
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::internal("the store attached no file"))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilesQuery {
    filter: Option<String>,
    // Listed field by field: `flatten` cannot read numbers from a query.
    after: Option<String>,
    before: Option<String>,
    limit: Option<usize>,
    order: Option<String>,
}

impl FilesQuery {
    fn filter(&self, batch_id: Option<String>) -> Result<FileFilter, ApiError> {
        let status = match self.filter.as_deref() {
            None => None,
            Some(s) => Some(VectorStoreFileStatus::parse(s).ok_or_else(|| {
                ApiError::invalid(format!(
                    "filter must be one of in_progress, completed, failed, cancelled; got '{s}'"
                ))
                .param("filter")
            })?),
        };
        Ok(FileFilter { status, batch_id })
    }
}

async fn list_files(
    app: &AppState,
    tenant: &Tenant,
    id: &str,
    query: Result<Query<FilesQuery>, QueryRejection>,
    batch_id: Option<String>,
) -> Result<Json<ListPage<VectorStoreFile>>, ApiError> {
    let res = resources(app)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let filter = query.filter(batch_id)?;
    let page = PageQuery {
        after: query.after,
        before: query.before,
        limit: query.limit,
        order: query.order,
    };
    let page = res
        .vector_stores
        .list_vector_store_files(tenant.as_str(), id, &filter, &page.request(100)?)
        .await
        .map_err(cursor_error)?
        .ok_or_else(|| store_not_found(id))?;
    Ok(Json(ListPage::new(page.data, page.has_more, |f| &f.id)))
}

async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: Result<Query<FilesQuery>, QueryRejection>,
) -> Result<Json<ListPage<VectorStoreFile>>, ApiError> {
    list_files(&app, &tenant, &id, query, None).await
}

async fn retrieve(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Json<VectorStoreFile>, ApiError> {
    resources(&app)?
        .vector_stores
        .get_vector_store_file(tenant.as_str(), &id, &file_id)
        .await?
        .map(Json)
        .ok_or_else(|| file_not_found(&file_id))
}

async fn update(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<VectorStoreFile>, ApiError> {
    let res = resources(&app)?;
    let req: UpdateVectorStoreFileRequest = parse_json(&body.map_err(body_error)?)?;
    let attributes = checked_attributes(req.attributes)?;
    res.vector_stores
        .update_file_attributes(tenant.as_str(), &id, &file_id, attributes.as_ref())
        .await?
        .map(Json)
        .ok_or_else(|| file_not_found(&file_id))
}

async fn detach(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Json<Deleted>, ApiError> {
    match resources(&app)?
        .vector_stores
        .detach_file(tenant.as_str(), &id, &file_id)
        .await?
    {
        true => Ok(Json(Deleted::new(
            file_id,
            OBJECT_VECTOR_STORE_FILE_DELETED,
        ))),
        false => Err(file_not_found(&file_id)),
    }
}

/// The file's chunks in order (empty until it is `completed`).
async fn content(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Json<FileContentPage>, ApiError> {
    let chunks = resources(&app)?
        .vector_stores
        .file_chunks(tenant.as_str(), &id, &file_id)
        .await?
        .ok_or_else(|| file_not_found(&file_id))?;
    Ok(Json(FileContentPage {
        object: OBJECT_FILE_CONTENT_PAGE.to_owned(),
        data: chunks.into_iter().map(TextContent::new).collect(),
        has_more: false,
        next_page: None,
    }))
}

async fn create_batch(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<VectorStoreFileBatch>, ApiError> {
    let res = resources(&app)?;
    let req: CreateFileBatchRequest = parse_json(&body.map_err(body_error)?)?;
    let files = req
        .into_files()
        .map_err(|m| ApiError::invalid(m).param("file_ids"))?;
    if files.is_empty() || files.len() > MAX_BATCH {
        return Err(
            ApiError::invalid(format!("A batch takes 1 to {MAX_BATCH} files.")).param("file_ids"),
        );
    }
    let files = files
        .into_iter()
        .map(attachment)
        .collect::<Result<Vec<_>, _>>()?;
    let batch = NewBatch {
        id: new_id(prefix::FILE_BATCH),
        created_at: now_secs(),
    };
    attach_all(res, &tenant, &id, &files, Some(&batch)).await?;
    res.vector_stores
        .get_file_batch(tenant.as_str(), &id, &batch.id)
        .await?
        .map(Json)
        .ok_or_else(|| batch_not_found(&batch.id))
}

async fn get_batch(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, batch_id)): Path<(String, String)>,
) -> Result<Json<VectorStoreFileBatch>, ApiError> {
    resources(&app)?
        .vector_stores
        .get_file_batch(tenant.as_str(), &id, &batch_id)
        .await?
        .map(Json)
        .ok_or_else(|| batch_not_found(&batch_id))
}

async fn cancel_batch(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, batch_id)): Path<(String, String)>,
) -> Result<Json<VectorStoreFileBatch>, ApiError> {
    resources(&app)?
        .vector_stores
        .cancel_file_batch(tenant.as_str(), &id, &batch_id)
        .await?
        .map(Json)
        .ok_or_else(|| batch_not_found(&batch_id))
}

async fn list_batch_files(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, batch_id)): Path<(String, String)>,
    query: Result<Query<FilesQuery>, QueryRejection>,
) -> Result<Json<ListPage<VectorStoreFile>>, ApiError> {
    let res = resources(&app)?;
    if res
        .vector_stores
        .get_file_batch(tenant.as_str(), &id, &batch_id)
        .await?
        .is_none()
    {
        return Err(batch_not_found(&batch_id));
    }
    list_files(&app, &tenant, &id, query, Some(batch_id)).await
}

//! The Files API (OpenAI's shapes): upload (multipart `purpose` + `file`),
//! list (`purpose`, cursor paging), retrieve, content, delete. Per tenant:
//! another tenant's file id is answered exactly like an unknown one.
//! Bytes live in the store (every replica sees every file); the size limit
//! is `[files] max_bytes`, enforced while the upload streams in.

use std::sync::Arc;

use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use windlass_protocol::ids::new_file_id;
use windlass_protocol::{Deleted, FileObject, FilePurpose, ListPage, OBJECT_FILE};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::multipart::{download, multipart_error, read_limited, FORM_OVERHEAD};
use crate::resources::{cursor_error, enabled, now_secs, PageQuery, Resources};
use crate::state::AppState;

/// `limit` of `GET /v1/files` (OpenAI allows up to 10000).
const MAX_LIST: usize = 10_000;

/// The routes; `/v1/files` takes bodies up to the file limit, the other
/// routes keep the server's.
pub(crate) fn routes(app: &AppState) -> Router<AppState> {
    let upload_limit = app.resources.as_ref().map_or(0, |r| r.file_max_bytes);
    let body_limit = usize::try_from(upload_limit.saturating_add(FORM_OVERHEAD))
        .unwrap_or(usize::MAX)
        .max(app.config.max_body_bytes);
    Router::new()
        .route(
            "/files",
            get(list)
                .post(upload)
                .layer(DefaultBodyLimit::max(body_limit)),
        )
        .route("/files/{id}", get(retrieve).delete(delete))
        .route("/files/{id}/content", get(content))
}

fn resources(app: &AppState) -> Result<&Arc<Resources>, ApiError> {
    enabled(app.resources.as_ref(), "Files")
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found("File", id).param("file_id")
}

async fn upload(
    State(app): State<AppState>,
    tenant: Tenant,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Json<FileObject>, ApiError> {
    let res = resources(&app)?;
    let mut form = form.map_err(|e| {
        ApiError::invalid(format!(
            "Expected a multipart/form-data body: {}",
            e.body_text()
        ))
        .code("invalid_multipart")
    })?;
    let (mut purpose, mut file) = (None, None);
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        match field.name().unwrap_or_default() {
            "purpose" => purpose = Some(field.text().await.map_err(multipart_error)?),
            "file" => {
                let name = field.file_name().map(str::to_owned).unwrap_or_default();
                file = Some((name, read_limited(field, res.file_max_bytes).await?));
            }
            other => {
                return Err(ApiError::invalid(format!(
                    "Unknown form field '{other}': an upload takes `purpose` and `file`."
                ))
                .param(other.to_owned())
                .code("unknown_parameter"))
            }
        }
    }
    let purpose = parse_purpose(purpose)?;
    let Some((filename, bytes)) = file else {
        return Err(missing("file"));
    };
    if filename.trim().is_empty() {
        return Err(ApiError::invalid("The `file` field needs a filename.").param("file"));
    }
    let object = FileObject::new(
        new_file_id(),
        filename,
        bytes.len() as u64,
        purpose,
        now_secs(),
    );
    res.files
        .create_file(tenant.as_str(), &object, &bytes)
        .await?;
    Ok(Json(object))
}

fn parse_purpose(purpose: Option<String>) -> Result<FilePurpose, ApiError> {
    let purpose = purpose.ok_or_else(|| missing("purpose"))?;
    FilePurpose::parse(purpose.trim())
        .filter(|p| FilePurpose::UPLOADABLE.contains(p))
        .ok_or_else(|| {
            let names: Vec<_> = FilePurpose::UPLOADABLE.iter().map(|p| p.as_str()).collect();
            ApiError::invalid(format!(
                "'{purpose}' is not a valid purpose: use one of {}.",
                names.join(", ")
            ))
            .param("purpose")
            .code("invalid_value")
        })
}

fn missing(field: &str) -> ApiError {
    ApiError::invalid(format!("Missing required form field '{field}'."))
        .param(field.to_owned())
        .code("missing_required_parameter")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    purpose: Option<String>,
    // Listed field by field: `flatten` cannot read numbers from a query.
    after: Option<String>,
    before: Option<String>,
    limit: Option<usize>,
    order: Option<String>,
}

async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<FileObject>>, ApiError> {
    let res = resources(&app)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let page = PageQuery {
        after: query.after,
        before: query.before,
        limit: query.limit,
        order: query.order,
    };
    let purpose = match query.purpose.as_deref() {
        None => None,
        Some(p) => Some(FilePurpose::parse(p).ok_or_else(|| {
            ApiError::invalid(format!("Unknown purpose '{p}'.")).param("purpose")
        })?),
    };
    let page = res
        .files
        .list_files(tenant.as_str(), purpose, &page.request(MAX_LIST)?)
        .await
        .map_err(cursor_error)?;
    Ok(Json(ListPage::new(page.data, page.has_more, |f| &f.id)))
}

async fn retrieve(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<FileObject>, ApiError> {
    resources(&app)?
        .files
        .get_file(tenant.as_str(), &id)
        .await?
        .map(Json)
        .ok_or_else(|| not_found(&id))
}

async fn content(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let res = resources(&app)?;
    let Some(file) = res.files.get_file(tenant.as_str(), &id).await? else {
        return Err(not_found(&id));
    };
    let bytes = res
        .files
        .file_content(tenant.as_str(), &id)
        .await?
        .ok_or_else(|| not_found(&id))?;
    Ok(download(&file.filename, bytes))
}

async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    match resources(&app)?
        .files
        .delete_file(tenant.as_str(), &id)
        .await?
    {
        true => Ok(Json(Deleted::new(id, OBJECT_FILE))),
        false => Err(not_found(&id)),
    }
}

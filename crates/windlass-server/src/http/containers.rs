//! The Containers API (OpenAI's shapes): create (name, `expires_after`,
//! `file_ids`, `memory_limit`), list, retrieve, delete; a container's files:
//! create from an upload (multipart `file`) or a Files API `file_id`, list,
//! retrieve, delete, `/content`. Per tenant; files live in the store, so
//! every replica (and a `code_interpreter` run) sees the same ones. A
//! container expires after `expires_after.minutes` idle (default 20); the
//! ingestion worker expires idle ones every minute.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Query, Request, State};
use axum::http::header;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use windlass_engine::ContainerListRequest;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    Container, ContainerExpiresAfter, ContainerExpiryAnchor, ContainerFile, ContainerFileSource,
    ContainerStatus, Deleted, ListPage, MemoryLimit, OBJECT_CONTAINER, OBJECT_CONTAINER_DELETED,
    OBJECT_CONTAINER_FILE, OBJECT_CONTAINER_FILE_DELETED,
};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::multipart::{download, multipart_error, read_limited, FORM_OVERHEAD};
use crate::resources::{cursor_error, enabled, now_secs, PageQuery, Resources};
use crate::state::AppState;

/// OpenAI's default idle time before a container expires.
const DEFAULT_IDLE_MINUTES: u64 = 20;
/// Longest idle time accepted.
const MAX_IDLE_MINUTES: u64 = 24 * 60;
/// Where the code sees a container's files.
const DATA_DIR: &str = "/mnt/data";

pub(crate) fn routes(app: &AppState) -> Router<AppState> {
    let upload_limit = app.resources.as_ref().map_or(0, |r| r.file_max_bytes);
    let body_limit = usize::try_from(upload_limit.saturating_add(FORM_OVERHEAD))
        .unwrap_or(usize::MAX)
        .max(app.config.max_body_bytes);
    Router::new()
        .route("/containers", get(list).post(create))
        .route("/containers/{id}", get(retrieve).delete(delete))
        .route(
            "/containers/{id}/files",
            get(list_files)
                .post(create_file)
                .layer(DefaultBodyLimit::max(body_limit)),
        )
        .route(
            "/containers/{id}/files/{file_id}",
            get(retrieve_file).delete(delete_file),
        )
        .route("/containers/{id}/files/{file_id}/content", get(content))
}

fn resources(app: &AppState) -> Result<&Arc<Resources>, ApiError> {
    enabled(app.resources.as_ref(), "Containers")
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found("Container", id).param("container_id")
}

fn file_not_found(id: &str) -> ApiError {
    ApiError::not_found("Container file", id).param("file_id")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateContainer {
    name: String,
    #[serde(default)]
    expires_after: Option<ContainerExpiresAfter>,
    #[serde(default)]
    file_ids: Option<Vec<String>>,
    #[serde(default)]
    memory_limit: Option<MemoryLimit>,
}

async fn create(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Container>, ApiError> {
    let res = resources(&app)?;
    let req: CreateContainer = parse_json(&body.map_err(body_error)?)?;
    let expires_after = req.expires_after.unwrap_or(ContainerExpiresAfter {
        anchor: ContainerExpiryAnchor::LastActiveAt,
        minutes: DEFAULT_IDLE_MINUTES,
    });
    if !(1..=MAX_IDLE_MINUTES).contains(&expires_after.minutes) {
        return Err(ApiError::invalid(format!(
            "expires_after.minutes must be between 1 and {MAX_IDLE_MINUTES}"
        ))
        .param("expires_after.minutes"));
    }
    // The files to copy in, read before anything is written.
    let mut copies = Vec::new();
    for id in req.file_ids.unwrap_or_default() {
        let (name, bytes) = files_api_file(res, &tenant, &id, "file_ids").await?;
        copies.push((name, bytes));
    }
    let now = now_secs();
    let container = Container {
        id: new_id(prefix::CONTAINER),
        object: OBJECT_CONTAINER.to_owned(),
        created_at: now,
        name: req.name,
        status: ContainerStatus::Running,
        expires_after: Some(expires_after),
        last_active_at: Some(now),
        memory_limit: req.memory_limit,
    };
    res.containers
        .create_container(tenant.as_str(), &container)
        .await?;
    for (name, bytes) in copies {
        put(res, &tenant, &container.id, &name, bytes).await?;
    }
    Ok(Json(container))
}

/// A Files API file's name and bytes; unknown (or another tenant's) is 404.
async fn files_api_file(
    res: &Resources,
    tenant: &Tenant,
    id: &str,
    param: &str,
) -> Result<(String, Vec<u8>), ApiError> {
    let missing = || ApiError::not_found("File", id).param(param.to_owned());
    let file = res
        .files
        .get_file(tenant.as_str(), id)
        .await?
        .ok_or_else(missing)?;
    let bytes = res
        .files
        .file_content(tenant.as_str(), id)
        .await?
        .ok_or_else(missing)?;
    Ok((file.filename, bytes))
}

/// Stores a user file under the data directory (replacing one at the same
/// path).
async fn put(
    res: &Resources,
    tenant: &Tenant,
    container_id: &str,
    name: &str,
    bytes: Vec<u8>,
) -> Result<ContainerFile, ApiError> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    if base.is_empty() || base == "." || base == ".." {
        return Err(ApiError::invalid("The file needs a name.").param("file"));
    }
    let file = ContainerFile {
        id: new_id(prefix::CONTAINER_FILE),
        object: OBJECT_CONTAINER_FILE.to_owned(),
        bytes: bytes.len() as u64,
        container_id: container_id.to_owned(),
        created_at: now_secs(),
        path: format!("{DATA_DIR}/{base}"),
        source: ContainerFileSource::User,
    };
    match res
        .containers
        .put_container_file(tenant.as_str(), &file, &bytes)
        .await?
    {
        true => Ok(file),
        false => Err(not_found(container_id)),
    }
}

fn list_request(query: &PageQuery) -> Result<ContainerListRequest, ApiError> {
    let page = query.request(100)?;
    Ok(ContainerListRequest {
        after: page.after,
        limit: page.limit,
        order: page.order,
    })
}

async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<ListPage<Container>>, ApiError> {
    let res = resources(&app)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let page = res
        .containers
        .list_containers(tenant.as_str(), &list_request(&query)?)
        .await
        .map_err(cursor_error)?;
    Ok(Json(ListPage::new(page.data, page.has_more, |c| &c.id)))
}

async fn retrieve(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Container>, ApiError> {
    resources(&app)?
        .containers
        .get_container(tenant.as_str(), &id)
        .await?
        .map(Json)
        .ok_or_else(|| not_found(&id))
}

async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    match resources(&app)?
        .containers
        .delete_container(tenant.as_str(), &id)
        .await?
    {
        true => Ok(Json(Deleted::new(id, OBJECT_CONTAINER_DELETED))),
        false => Err(not_found(&id)),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFromId {
    file_id: String,
}

/// `multipart/form-data` with a `file`, or JSON `{"file_id": ...}`.
async fn create_file(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    req: Request,
) -> Result<Json<ContainerFile>, ApiError> {
    let res = resources(&app)?;
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/")
        });
    let (name, bytes) = if multipart {
        let form = Multipart::from_request(req, &app).await;
        uploaded(form, res.file_max_bytes).await?
    } else {
        let body = Bytes::from_request(req, &app).await.map_err(body_error)?;
        let FileFromId { file_id } = parse_json(&body)?;
        files_api_file(res, &tenant, &file_id, "file_id").await?
    };
    put(res, &tenant, &id, &name, bytes).await.map(Json)
}

/// The `file` field of an upload.
async fn uploaded(
    form: Result<Multipart, MultipartRejection>,
    max: u64,
) -> Result<(String, Vec<u8>), ApiError> {
    let mut form = form.map_err(|e| {
        ApiError::invalid(format!(
            "Expected a multipart/form-data body: {}",
            e.body_text()
        ))
        .code("invalid_multipart")
    })?;
    let mut file = None;
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        match field.name().unwrap_or_default() {
            "file" => {
                let name = field.file_name().map(str::to_owned).unwrap_or_default();
                file = Some((name, read_limited(field, max).await?));
            }
            other => {
                return Err(ApiError::invalid(format!(
                    "Unknown form field '{other}': a container file upload takes `file`."
                ))
                .param(other.to_owned())
                .code("unknown_parameter"))
            }
        }
    }
    file.ok_or_else(|| {
        ApiError::invalid("Missing required form field 'file'.")
            .param("file")
            .code("missing_required_parameter")
    })
}

async fn list_files(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<ListPage<ContainerFile>>, ApiError> {
    let res = resources(&app)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let page = res
        .containers
        .list_container_files(tenant.as_str(), &id, &list_request(&query)?)
        .await
        .map_err(cursor_error)?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(ListPage::new(page.data, page.has_more, |f| &f.id)))
}

async fn retrieve_file(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Json<ContainerFile>, ApiError> {
    resources(&app)?
        .containers
        .get_container_file(tenant.as_str(), &id, &file_id)
        .await?
        .map(Json)
        .ok_or_else(|| file_not_found(&file_id))
}

async fn delete_file(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Json<Deleted>, ApiError> {
    match resources(&app)?
        .containers
        .delete_container_file(tenant.as_str(), &id, &file_id)
        .await?
    {
        true => Ok(Json(Deleted::new(file_id, OBJECT_CONTAINER_FILE_DELETED))),
        false => Err(file_not_found(&file_id)),
    }
}

async fn content(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, file_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let res = resources(&app)?;
    let file = res
        .containers
        .get_container_file(tenant.as_str(), &id, &file_id)
        .await?
        .ok_or_else(|| file_not_found(&file_id))?;
    let bytes = res
        .containers
        .container_file_content(tenant.as_str(), &id, &file_id)
        .await?
        .ok_or_else(|| file_not_found(&file_id))?;
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    Ok(download(name, bytes))
}

//! The Vector stores API (OpenAI's shapes): create (name, `file_ids`,
//! `chunking_strategy`, `expires_after`, metadata), list, retrieve, modify,
//! delete, and search. A store is created with this server's embedding
//! model (`search_mode: "hybrid"`) or without one (`"keyword"`).
//! Attached files are ingested by the background worker (`ingest.rs`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value};
use windlass_engine::{Attached, NewAttachment, NewVectorStore, VectorStoreUpdate};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    CreateVectorStoreRequest, Deleted, ExpiresAfter, ListPage, SearchRequest, SearchResultsPage,
    UpdateVectorStoreRequest, VectorStore, VectorStoreStatus, OBJECT_VECTOR_STORE_DELETED,
};
use windlass_retrieval::{results_page, SearchError, SearchParams};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::resources::{
    cursor_error, enabled, now_secs, vector_store_expired, PageQuery, Resources,
};
use crate::state::AppState;

/// OpenAI's bound on `expires_after.days`.
const MAX_EXPIRY_DAYS: u32 = 365;
/// Most file ids given at creation.
const MAX_FILE_IDS: usize = 500;
/// Longest `description`, in characters.
const MAX_DESCRIPTION_CHARS: usize = 512;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/vector_stores", get(list).post(create))
        .route(
            "/vector_stores/{id}",
            get(retrieve).post(modify).delete(delete),
        )
        .route("/vector_stores/{id}/search", post(search))
}

fn resources(app: &AppState) -> Result<&Arc<Resources>, ApiError> {
    enabled(app.resources.as_ref(), "Vector stores")
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found("Vector store", id).param("vector_store_id")
}

fn check_metadata(metadata: &Map<String, Value>) -> Result<(), ApiError> {
    let bad = metadata.len() > 16
        || metadata
            .iter()
            .any(|(k, v)| k.len() > 64 || v.as_str().is_none_or(|s| s.len() > 512));
    match bad {
        true => Err(ApiError::invalid(
            "metadata must be at most 16 string values (keys up to 64 characters, values up to 512).",
        )
        .param("metadata")),
        false => Ok(()),
    }
}

fn check_description(description: Option<&String>) -> Result<(), ApiError> {
    match description {
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => Err(ApiError::invalid(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters."
        ))
        .param("description")),
        _ => Ok(()),
    }
}

fn check_expiry(expires: Option<&ExpiresAfter>) -> Result<(), ApiError> {
    match expires {
        Some(e) if !(1..=MAX_EXPIRY_DAYS).contains(&e.days) => Err(ApiError::invalid(format!(
            "expires_after.days must be between 1 and {MAX_EXPIRY_DAYS}"
        ))
        .param("expires_after.days")),
        _ => Ok(()),
    }
}

async fn create(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<VectorStore>, ApiError> {
    let res = resources(&app)?;
    let bytes = body.map_err(body_error)?;
    let req: CreateVectorStoreRequest = match bytes.is_empty() {
        true => CreateVectorStoreRequest::default(),
        false => parse_json(&bytes)?,
    };
    let metadata = req.metadata.unwrap_or_default();
    check_metadata(&metadata)?;
    check_description(req.description.as_ref())?;
    check_expiry(req.expires_after.as_ref())?;
    let strategy = req
        .chunking_strategy
        .unwrap_or(windlass_protocol::ChunkingStrategy::Auto);
    strategy
        .check()
        .map_err(|m| ApiError::invalid(m).param("chunking_strategy"))?;
    let file_ids = req.file_ids.unwrap_or_default();
    if file_ids.len() > MAX_FILE_IDS {
        return Err(
            ApiError::invalid(format!("At most {MAX_FILE_IDS} file_ids are allowed."))
                .param("file_ids"),
        );
    }
    // Every file must exist before anything is written.
    for id in &file_ids {
        if res.files.get_file(tenant.as_str(), id).await?.is_none() {
            return Err(ApiError::not_found("File", id).param("file_ids"));
        }
    }
    let new = NewVectorStore {
        id: new_id(prefix::VECTOR_STORE),
        name: req.name.unwrap_or_default(),
        description: req.description,
        created_at: now_secs(),
        metadata,
        expires_after: req.expires_after,
        embedding_model: res.embedding_model(),
    };
    let mut store = res
        .vector_stores
        .create_vector_store(tenant.as_str(), &new)
        .await?;
    if !file_ids.is_empty() {
        let chunking = strategy.resolve();
        let files: Vec<_> = file_ids
            .into_iter()
            .map(|file_id| NewAttachment {
                file_id,
                attributes: None,
                chunking,
            })
            .collect();
        let attached = res
            .vector_stores
            .attach_files(tenant.as_str(), &new.id, &files, None, now_secs())
            .await?;
        if let Attached::UnknownFile(id) = attached {
            // Deleted meanwhile: undo the store, nothing half-made.
            res.vector_stores
                .delete_vector_store(tenant.as_str(), &new.id)
                .await?;
            return Err(ApiError::not_found("File", &id).param("file_ids"));
        }
        res.wake_ingestion();
        if let Some(s) = res
            .vector_stores
            .get_vector_store(tenant.as_str(), &new.id)
            .await?
        {
            store = s;
        }
    }
    Ok(Json(store))
}

async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Result<Json<ListPage<VectorStore>>, ApiError> {
    let res = resources(&app)?;
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let page = res
        .vector_stores
        .list_vector_stores(tenant.as_str(), &query.request(100)?)
        .await
        .map_err(cursor_error)?;
    Ok(Json(ListPage::new(page.data, page.has_more, |s| &s.id)))
}

async fn retrieve(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<VectorStore>, ApiError> {
    resources(&app)?
        .vector_stores
        .get_vector_store(tenant.as_str(), &id)
        .await?
        .map(Json)
        .ok_or_else(|| not_found(&id))
}

async fn modify(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<VectorStore>, ApiError> {
    let res = resources(&app)?;
    let req: UpdateVectorStoreRequest = parse_json(&body.map_err(body_error)?)?;
    if let Some(m) = &req.metadata {
        check_metadata(m)?;
    }
    if let Some(e) = &req.expires_after {
        check_expiry(e.as_ref())?;
    }
    check_description(req.description.as_ref())?;
    let update = VectorStoreUpdate {
        name: req.name,
        description: req.description,
        expires_after: req.expires_after,
        metadata: req.metadata,
    };
    res.vector_stores
        .update_vector_store(tenant.as_str(), &id, &update)
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
        .vector_stores
        .delete_vector_store(tenant.as_str(), &id)
        .await?
    {
        true => Ok(Json(Deleted::new(id, OBJECT_VECTOR_STORE_DELETED))),
        false => Err(not_found(&id)),
    }
}

/// `rewrite_query: true` is refused: no model is configured to rewrite
/// queries, and answering as if one had would hide that the query was
/// searched as given. `false` (or absent) searches the queries as given,
/// and `search_query` echoes them.
async fn search(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<SearchResultsPage>, ApiError> {
    let res = resources(&app)?;
    let req: SearchRequest = parse_json(&body.map_err(body_error)?)?;
    if req.rewrite_query == Some(true) {
        return Err(ApiError::invalid(
            "rewrite_query is not supported: this server has no model to rewrite queries. \
             Send rewrite_query: false (or omit it) to search the query as given.",
        )
        .param("rewrite_query")
        .code("unsupported_parameter"));
    }
    let Some(store) = res
        .vector_stores
        .get_vector_store(tenant.as_str(), &id)
        .await?
    else {
        return Err(not_found(&id));
    };
    if store.status == VectorStoreStatus::Expired {
        return Err(vector_store_expired(&id, "searched"));
    }
    let queries = req.query.queries();
    let params = SearchParams {
        vector_store_ids: vec![id.clone()],
        queries: queries.clone(),
        filter: req.filters,
        max_num_results: req.max_num_results,
        ranking_options: req.ranking_options,
    };
    let outcome = res
        .searcher()
        .search(tenant.as_str(), &params)
        .await
        .map_err(|e| search_error(e, &id))?;
    Ok(Json(results_page(queries, &outcome)))
}

fn search_error(e: SearchError, id: &str) -> ApiError {
    match e {
        SearchError::Invalid { message, param } => ApiError::invalid(message).param(param),
        SearchError::UnknownStore => not_found(id),
        SearchError::Expired(_) => vector_store_expired(id, "searched"),
        SearchError::Embedding(m) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "server_error",
            format!("Embedding the query failed: {m}"),
        )
        .code("embedding_failed"),
        SearchError::Store(s) => s.into(),
    }
}

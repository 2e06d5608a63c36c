//! Stored responses: retrieve, delete, list input items, cancel.

use std::time::Duration;

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::Json;
use serde::{Deserialize, Serialize};
use windlass_engine::{PageRequest, SortOrder, Trace};
use windlass_protocol::{DeletedResponse, Item, ItemList, ResponseResource};

use crate::error::ApiError;
use crate::tenant::Tenant;
use crate::AppState;

/// The `{id}` of a path; one that is not valid UTF-8 after percent-decoding
/// gets the OpenAI error shape like any other bad input.
pub struct ResponseId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ResponseId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(id)) => Ok(ResponseId(id)),
            Err(e) => Err(path_error(&e)),
        }
    }
}

fn path_error(e: &PathRejection) -> ApiError {
    ApiError::invalid(format!(
        "Invalid response id in the path: {}",
        e.body_text()
    ))
    .param("id")
    .code("invalid_id")
}

/// Longest wait for a running response to stop on cancel or delete.
const STOP_WAIT: Duration = Duration::from_secs(30);

pub async fn get_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
) -> Result<Json<ResponseResource>, ApiError> {
    if let Some(r) = app.engine.store().get(tenant.as_str(), &id).await? {
        return Ok(Json(r));
    }
    app.inflight
        .snapshot(tenant.as_str(), &id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Response", &id))
}

/// `GET /v1/responses/{id}/trace`: the execution trace stored with a
/// response (404, like an unknown response, when there is none).
pub async fn get_trace(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<TraceResource>, ApiError> {
    match app.engine.store().trace(tenant.as_str(), &id).await? {
        Some(trace) => Ok(Json(TraceResource {
            object: "response.trace",
            trace,
        })),
        None => Err(ApiError::not_found("Response", &id)),
    }
}

/// The trace as the API returns it.
#[derive(Debug, Serialize)]
pub struct TraceResource {
    object: &'static str,
    #[serde(flatten)]
    trace: Trace,
}

/// A running response is cancelled first and deleted once it has ended and
/// been stored, so the delete is never lost to a save that lands after it.
pub async fn delete_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
) -> Result<Json<DeletedResponse>, ApiError> {
    let was_running = match app.inflight.cancel(tenant.as_str(), &id) {
        Some(done) => {
            wait_for_end(done).await?;
            true
        }
        None => false,
    };
    // A running response with `store: false` has nothing stored to delete.
    if app.engine.store().delete(tenant.as_str(), &id).await? || was_running {
        Ok(Json(DeletedResponse {
            id,
            object: "response.deleted".to_owned(),
            deleted: true,
        }))
    } else {
        Err(ApiError::not_found("Response", &id))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    after: Option<String>,
    limit: Option<usize>,
    order: Option<String>,
    #[serde(rename = "include[]", default)]
    include_list: Option<String>,
    #[serde(default)]
    include: Option<String>,
}

pub async fn input_items(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ItemList>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    // No extra data (image URLs, logprobs) is kept for input items, so an
    // `include` cannot be honoured: refuse it rather than ignore it.
    if let Some(value) = q.include.as_ref().or(q.include_list.as_ref()) {
        return Err(ApiError::invalid(format!(
            "include value '{value}' is not supported for input items"
        ))
        .param("include"));
    }
    let limit = q.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::invalid("limit must be between 1 and 100").param("limit"));
    }
    let order = match q.order.as_deref() {
        None | Some("desc") => SortOrder::Desc,
        Some("asc") => SortOrder::Asc,
        Some(other) => {
            return Err(
                ApiError::invalid(format!("order must be 'asc' or 'desc', got '{other}'"))
                    .param("order"),
            )
        }
    };
    let page = PageRequest {
        after: q.after,
        limit,
        order,
    };
    let page = app
        .engine
        .store()
        .input_items(tenant.as_str(), &id, &page)
        .await?
        .ok_or_else(|| ApiError::not_found("Response", &id))?;
    let first_id = page.items.first().and_then(Item::id).map(str::to_owned);
    let last_id = page.items.last().and_then(Item::id).map(str::to_owned);
    Ok(Json(ItemList {
        object: "list".to_owned(),
        data: page.items,
        first_id,
        last_id,
        has_more: page.has_more,
    }))
}

pub async fn cancel_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
) -> Result<Json<ResponseResource>, ApiError> {
    if let Some(done) = app.inflight.cancel(tenant.as_str(), &id) {
        return wait_for_end(done).await.map(Json);
    }
    match app.engine.store().get(tenant.as_str(), &id).await? {
        Some(r) => Err(ApiError::invalid(format!(
            "Cannot cancel a response with status '{}': only in-progress responses can be cancelled.",
            r.status.as_str()
        ))
        .code("response_not_cancellable")),
        None => Err(ApiError::not_found("Response", &id)),
    }
}

/// The final state of a cancelled run, once it has ended (and been saved).
async fn wait_for_end(
    mut done: tokio::sync::watch::Receiver<Option<ResponseResource>>,
) -> Result<ResponseResource, ApiError> {
    let waited = tokio::time::timeout(STOP_WAIT, async {
        loop {
            if let Some(r) = done.borrow().clone() {
                return Some(r);
            }
            if done.changed().await.is_err() {
                return done.borrow().clone();
            }
        }
    })
    .await;
    match waited {
        Ok(Some(r)) => Ok(r),
        _ => Err(ApiError::internal("the response did not stop in time")),
    }
}

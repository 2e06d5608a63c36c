//! Stored responses: retrieve, delete, list input items, cancel.

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use windlass_engine::{PageRequest, SortOrder, Trace};
use windlass_protocol::{DeletedResponse, Item, ItemList, ResponseResource};

use crate::error::ApiError;
use crate::AppState;

pub async fn get_response(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ResponseResource>, ApiError> {
    if let Some(r) = app.engine.store().get(&id).await? {
        return Ok(Json(r));
    }
    app.inflight
        .snapshot(&id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Response", &id))
}

/// `GET /v1/responses/{id}/trace`: the execution trace stored with a
/// response (404, like an unknown response, when there is none).
pub async fn get_trace(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TraceResource>, ApiError> {
    match app.engine.store().trace(&id).await? {
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

pub async fn delete_response(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<DeletedResponse>, ApiError> {
    if app.engine.store().delete(&id).await? {
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
    Path(id): Path<String>,
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
        .input_items(&id, &page)
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
    Path(id): Path<String>,
) -> Result<Json<ResponseResource>, ApiError> {
    if let Some(mut done) = app.inflight.cancel(&id) {
        let waited = tokio::time::timeout(Duration::from_secs(30), async {
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
        if let Ok(Some(r)) = waited {
            return Ok(Json(r));
        }
        return Err(ApiError::internal("the response did not stop in time"));
    }
    match app.engine.store().get(&id).await? {
        Some(r) => Err(ApiError::invalid(format!(
            "Cannot cancel a response with status '{}': only in-progress responses can be cancelled.",
            r.status.as_str()
        ))
        .code("response_not_cancellable")),
        None => Err(ApiError::not_found("Response", &id)),
    }
}

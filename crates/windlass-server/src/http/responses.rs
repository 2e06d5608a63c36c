//! Stored responses: retrieve, delete, list input items, cancel.

use std::time::Duration;

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use windlass_engine::Trace;
use windlass_protocol::include::{present_response, HOSTED_INCLUDES};
use windlass_protocol::{DeletedResponse, ItemList, ResponseResource};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::item_list::{list_presented, ListQuery};
use crate::run::remote::{self, Stopped};
use crate::run::resume::resume_stream;
use crate::state::AppState;

/// The `{id}` of a path; one that is not valid UTF-8 after percent-decoding
/// gets the OpenAI error shape like any other bad input.
pub(crate) struct ResponseId(pub String);

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

/// The query of `GET /v1/responses/{id}`.
#[derive(Debug, Deserialize)]
pub(crate) struct GetQuery {
    /// Stream the response's events instead (see `run/resume.rs`).
    #[serde(default)]
    stream: Option<bool>,
    /// With `stream`: only events numbered above this one.
    #[serde(default)]
    starting_after: Option<u64>,
    /// Hosted-tool item data to show (`file_search_call.results`, ...).
    #[serde(rename = "include[]", default)]
    include_list: Option<String>,
    #[serde(default)]
    include: Option<String>,
}

/// A stored response; a running one as it stands (this process's snapshot,
/// or the live row of a background response running elsewhere); or, with
/// `stream=true`, its event stream from `starting_after` on.
pub(crate) async fn get_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
    query: Result<Query<GetQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    if q.stream == Some(true) {
        return resume_stream(&app, tenant.as_str(), &id, q.starting_after).await;
    }
    let include: Vec<String> = q.include.or(q.include_list).into_iter().collect();
    if let Some(bad) = include
        .iter()
        .find(|i| !HOSTED_INCLUDES.contains(&i.as_str()))
    {
        return Err(
            ApiError::invalid(format!("include value '{bad}' is not supported here"))
                .param("include"),
        );
    }
    // Stored complete; shown cut to `include`, as the run's own answer was.
    let shown = |mut r: ResponseResource| {
        present_response(&mut r, &include);
        Json(r).into_response()
    };
    if let Some(r) = app.engine.store().get(tenant.as_str(), &id).await? {
        return Ok(shown(r));
    }
    if let Some(r) = app.inflight.snapshot(tenant.as_str(), &id) {
        return Ok(shown(r));
    }
    if let Some(runs) = &app.runs {
        if let Some(live) = runs.get_live(tenant.as_str(), &id).await? {
            return Ok(shown(live.response));
        }
    }
    Err(ApiError::not_found("Response", &id))
}

/// `GET /v1/responses/{id}/trace`: the execution trace stored with a
/// response (404, like an unknown response, when there is none).
pub(crate) async fn get_trace(
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
pub(crate) struct TraceResource {
    object: &'static str,
    #[serde(flatten)]
    trace: Trace,
}

/// A running response is cancelled first and deleted once it has ended and
/// been stored, so the delete is never lost to a save that lands after it.
pub(crate) async fn delete_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
) -> Result<Json<DeletedResponse>, ApiError> {
    let was_running = match app.inflight.cancel(tenant.as_str(), &id) {
        Some(done) => {
            wait_for_end(done).await?;
            true
        }
        // Not running here: maybe in another replica (not stored yet, or
        // stored as still running).
        None => match app.engine.store().get(tenant.as_str(), &id).await? {
            Some(r) if r.status.is_terminal() => false,
            _ => !matches!(
                remote::stop_elsewhere(&app, tenant.as_str(), &id, STOP_WAIT).await?,
                Stopped::NotRunning
            ),
        },
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

pub(crate) async fn input_items(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ItemList>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let (page, include) = q.page_and_include("input items")?;
    let page = app
        .engine
        .store()
        .input_items(tenant.as_str(), &id, &page)
        .await?
        .ok_or_else(|| ApiError::not_found("Response", &id))?;
    Ok(Json(list_presented(page.items, page.has_more, &include)))
}

pub(crate) async fn cancel_response(
    State(app): State<AppState>,
    tenant: Tenant,
    ResponseId(id): ResponseId,
) -> Result<Json<ResponseResource>, ApiError> {
    if let Some(done) = app.inflight.cancel(tenant.as_str(), &id) {
        return wait_for_end(done).await.map(Json);
    }
    let stored = app.engine.store().get(tenant.as_str(), &id).await?;
    if let Some(r) = stored.as_ref().filter(|r| r.status.is_terminal()) {
        return Err(not_cancellable(r));
    }
    // Unknown here, or live: maybe running in another replica.
    match remote::stop_elsewhere(&app, tenant.as_str(), &id, STOP_WAIT).await? {
        Stopped::Stored(r) => return Ok(Json(*r)),
        // As for any response not stored: not found (with the reason, and
        // that the run did stop).
        Stopped::Unstored => {
            return Err(ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                "invalid_request_error",
                format!(
                    "Response with id '{id}' not found: it was created with store: false and \
                     is not kept. Its run on another server process has been cancelled."
                ),
            )
            .code("not_found"))
        }
        Stopped::NotRunning => {}
    }
    if let Some(runs) = &app.runs {
        // Live, but no replica claims it: its replica died and the row
        // waits for its lease to expire and be recovered.
        if runs.get_live(tenant.as_str(), &id).await?.is_some() {
            return Err(ApiError::new(
                axum::http::StatusCode::CONFLICT,
                "invalid_request_error",
                "This response's server process is not answering; retry once it has been recovered.",
            )
            .code("response_running_elsewhere"));
        }
    }
    match stored {
        Some(r) => Err(not_cancellable(&r)),
        None => Err(ApiError::not_found("Response", &id)),
    }
}

fn not_cancellable(r: &ResponseResource) -> ApiError {
    ApiError::invalid(format!(
        "Cannot cancel a response with status '{}': only in-progress responses can be cancelled.",
        r.status.as_str()
    ))
    .code("response_not_cancellable")
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

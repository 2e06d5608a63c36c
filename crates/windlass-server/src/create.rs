//! `POST /v1/responses`: parse, prepare, then run as JSON or as SSE.
//! No loop logic here: the engine decides everything.

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use windlass_engine::{ClientToolsStatus, NoEvents, PreparedRun, RunContext};
use windlass_protocol::{CreateResponseRequest, Item};

use crate::client_tools_status;
use crate::completion::Completion;
use crate::error::ApiError;
use crate::in_place::InPlace;
use crate::keys::AuthedKey;
use crate::quota_gate::Charge;
use crate::request_context::{CompletionLogged, RequestContext};
use crate::runs::{self, log::EventLog};
use crate::sse::SseBody;
use crate::tenant::Tenant;
use crate::AppState;

pub async fn create_response(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    context: Option<Extension<RequestContext>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(body_error)?;
    let header_status = client_tools_status::from_headers(&headers)?;
    let req: CreateResponseRequest = parse_request(&bytes)?;
    let key = key.map(|Extension(k)| k);
    let (prepared, charge, resume) = prepare(&app, key.as_ref(), header_status, req, None).await?;
    if prepared.background() {
        return background(&app, prepared, resume, charge).await;
    }
    let started = context.map_or_else(std::time::Instant::now, |Extension(c)| c.started);
    let completion = Completion::of(&app.metrics, &prepared, started);
    // The run may outlive this handler (SSE body, a client that left):
    // its log lines keep the request's span, and so its request id.
    let span = tracing::Span::current();
    let cancel = CancellationToken::new();
    // A stored stream keeps its events in memory while it runs, so a client
    // can re-attach; they reach the store only if its client leaves early.
    let log = (prepared.stream() && prepared.store())
        .then(|| EventLog::new(prepared.tenant(), prepared.id(), false));
    let registration = app.inflight.register_logged(
        prepared.tenant(),
        prepared.response(),
        cancel.clone(),
        log.clone(),
    );
    let engine = app.engine.clone();

    if prepared.stream() {
        let runs = app.runs.clone();
        let run_log = log.clone();
        let body = SseBody::recording(
            app.config.sse_buffer_bytes,
            cancel.clone(),
            log,
            |mut sink| {
                async move {
                    let outcome = completion.run(&engine, prepared, &mut sink, cancel).await;
                    if let Some(log) = run_log {
                        log.end();
                        if let Some(runs) = runs {
                            log.flush(runs.as_ref()).await;
                        }
                    }
                    registration.finish(&outcome.response);
                    // Charged before `[DONE]`: the client's next request sees it.
                    charge.usage(&outcome.response).await;
                    sink.done();
                }
                .instrument(span)
            },
        )
        .keep_alive(app.config.sse_keepalive);
        let body = body.map(Ok::<_, std::convert::Infallible>);
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .header("x-accel-buffering", "no")
            .extension(CompletionLogged)
            .body(Body::from_stream(body))
            .map_err(|e| ApiError::internal(e.to_string()));
    }

    // Polled in place; a client that hangs up drops it, which cancels the
    // run and lets it end, stored, in a task of its own.
    let token = cancel.clone();
    let run = async move {
        let outcome = completion
            .run(&engine, prepared, &mut NoEvents, cancel)
            .await;
        registration.finish(&outcome.response);
        charge.usage(&outcome.response).await;
        outcome
    };
    let outcome = InPlace::new(run.instrument(span), token).await;
    let mut response = match &outcome.failure {
        Some(f) => ApiError::from(f).into_response(),
        None => Json(outcome.response).into_response(),
    };
    response.extensions_mut().insert(CompletionLogged);
    Ok(response)
}

/// `background: true`: recorded `queued` and handed to a worker; the answer
/// is the queued response, or its stream (which keeps running, unlike a
/// plain stream, when the client leaves).
async fn background(
    app: &AppState,
    prepared: PreparedRun,
    resume: Option<String>,
    charge: Charge,
) -> Result<Response, ApiError> {
    let Some(runs) = app.runs.clone() else {
        return Err(ApiError::invalid(
            "Background mode is not available: this server keeps no live runs.",
        )
        .param("background"));
    };
    let stream = prepared.stream();
    let (response, log) = runs::start_background(app, runs, prepared, resume, Some(charge)).await?;
    if stream {
        return Ok(runs::resume::sse(
            runs::resume::follow_log(log, None).boxed(),
            app.config.sse_keepalive,
        ));
    }
    Ok(Json(response).into_response())
}

/// Checks, admits (quotas) and prepares a create for whoever `key`
/// authenticated, in its tenant: every surface that starts a response (HTTP,
/// WebSocket) goes through here. Charge the returned [`Charge`] with the
/// response once it has ended; the `Option<String>` is a background run's
/// resume blob. `known`: see
/// [`windlass_engine::RunContext::known_context`].
pub async fn prepare(
    app: &AppState,
    key: Option<&AuthedKey>,
    header_status: Option<ClientToolsStatus>,
    req: CreateResponseRequest,
    known: Option<Vec<Item>>,
) -> Result<(PreparedRun, Charge, Option<String>), ApiError> {
    let tenant = Tenant::of(key);
    // Before anything runs: a refused request costs nothing upstream.
    let charge = crate::quota_gate::admit(app, key, tenant.as_str()).await?;
    crate::consistency::previous_not_running(app, tenant.as_str(), &req)?;
    let status = client_tools_status::effective(
        header_status,
        key.and_then(|k| k.client_tools_status),
        app.engine.config().client_tools_status,
    );
    // The key's name is who the policy (governance) sees as the caller.
    let principal = key.map(|k| k.name.clone());
    // What a restarted server needs to start a queued background run again.
    let resume = match req.background {
        Some(true) => runs::resume_blob(&req, principal.as_deref(), status),
        _ => None,
    };
    let ctx = RunContext::for_tenant(tenant.as_str())
        .principal(principal)
        .client_tools_status(status)
        .known_context(known);
    let prepared = app.engine.prepare(ctx, req).await?;
    Ok((prepared, charge, resume))
}

/// Parses the create body; a wrong-typed field is named in `param`.
pub fn parse_request(bytes: &[u8]) -> Result<CreateResponseRequest, ApiError> {
    parse_json(bytes).map_err(|err| match blame_field(bytes) {
        Some((field, why)) => ApiError::invalid(format!("Invalid value for '{field}': {why}"))
            .param(field)
            .code("invalid_value"),
        None => err,
    })
}

/// On the error path only: finds the top-level field that fails on its own.
fn blame_field(bytes: &[u8]) -> Option<(String, String)> {
    let serde_json::Value::Object(map) = serde_json::from_slice(bytes).ok()? else {
        return None;
    };
    map.into_iter().find_map(|(k, v)| {
        let mut one = serde_json::Map::new();
        one.insert(k.clone(), v);
        serde_json::from_value::<CreateResponseRequest>(serde_json::Value::Object(one))
            .err()
            .map(|e| (k, e.to_string()))
    })
}

/// Parses a JSON body with an OpenAI-style message naming what is wrong.
pub fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let message = if e.is_syntax() || e.is_eof() {
            format!("We could not parse the JSON body of your request: {e}")
        } else {
            format!("Invalid request body: {e}")
        };
        ApiError::invalid(message).code(if e.is_data() {
            "invalid_value"
        } else {
            "invalid_json"
        })
    })
}

pub fn body_error(rejection: BytesRejection) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            status,
            "invalid_request_error",
            "Request body is too large.",
        )
        .code("request_too_large")
    } else {
        ApiError::new(status, "invalid_request_error", rejection.body_text())
    }
}

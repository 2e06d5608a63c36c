//! `POST /v1/responses`: parse, prepare, then run as JSON, as SSE, or in the
//! background. No loop logic here: the engine decides everything.

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures::StreamExt;
use tracing::{Instrument, Span};
use windlass_engine::NoEvents;

use crate::client_tools_status;
use crate::error::ApiError;
use crate::guard::keys::AuthedKey;
use crate::intake::{self, body_error, parse_request, Admitted};
use crate::request_context::{CompletionLogged, RequestContext};
use crate::run::in_place::InPlace;
use crate::run::launch::{Keep, Launch};
use crate::run::log::EventLog;
use crate::run::{resume, worker};
use crate::sse::SseBody;
use crate::state::AppState;

pub(crate) async fn create_response(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    context: Option<Extension<RequestContext>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(body_error)?;
    let header_status = client_tools_status::from_headers(&headers)?;
    let req = parse_request(&bytes)?;
    let key = key.map(|Extension(k)| k);
    let admitted = intake::prepare(&app, key.as_ref(), header_status, req, None).await?;
    let dropped = admitted.prepared.dropped_tools().join(", ");
    let started = context.map_or_else(Instant::now, |Extension(c)| c.started);
    // The run may outlive this handler (SSE body, a client that left):
    // its log lines keep the request's span, and so its request id.
    let span = Span::current();
    let mut response = if admitted.prepared.background() {
        background(&app, admitted).await?
    } else if admitted.prepared.stream() {
        stream(&app, admitted, started, span)?
    } else {
        json(&app, admitted, started, span).await
    };
    mark_dropped(&mut response, &dropped);
    Ok(response)
}

/// Hosted tool types the gateway left out (nothing serves them and the
/// operator lets them be dropped) are named in `x-windlass-dropped-tools`,
/// so no client believes they ran.
fn mark_dropped(response: &mut Response, dropped: &str) {
    if dropped.is_empty() {
        return;
    }
    if let Ok(value) = axum::http::HeaderValue::from_str(dropped) {
        response
            .headers_mut()
            .insert("x-windlass-dropped-tools", value);
    }
}

/// The run inside an SSE body.
fn stream(
    app: &AppState,
    Admitted {
        prepared, charge, ..
    }: Admitted,
    started: Instant,
    span: Span,
) -> Result<Response, ApiError> {
    // A stored stream keeps its events in memory while it runs, so a client
    // can re-attach; they reach the store only if its client leaves early.
    let log = prepared
        .store()
        .then(|| EventLog::new(prepared.tenant(), prepared.id(), false));
    let keep = log.clone().map_or(Keep::Nothing, Keep::Stream);
    let obfuscation = prepared.obfuscation();
    let launch = Launch::register(app, prepared, started, keep, Some(charge));
    let cancel = launch.cancel_token().clone();
    let limit = app.config.sse_buffer_bytes;
    let body = SseBody::recording(limit, cancel, log, move |mut sink| {
        sink.obfuscation(obfuscation);
        async move {
            // Charged before `[DONE]`: the client's next request sees it.
            launch.run(&mut sink).await;
            sink.done();
        }
        .instrument(span)
    })
    .keep_alive(app.config.sse_keepalive);
    let body = body.map(Ok::<_, std::convert::Infallible>);
    let mut response = crate::sse::event_stream_response(Body::from_stream(body));
    response.extensions_mut().insert(CompletionLogged);
    Ok(response)
}

/// The run polled in place; a client that hangs up drops it, which cancels
/// the run and lets it end, stored, in a task of its own.
async fn json(
    app: &AppState,
    Admitted {
        prepared, charge, ..
    }: Admitted,
    started: Instant,
    span: Span,
) -> Response {
    let launch = Launch::register(app, prepared, started, Keep::Nothing, Some(charge));
    let token = launch.cancel_token().clone();
    let run = async move { launch.run(&mut NoEvents).await };
    let outcome = InPlace::new(run.instrument(span), token).await;
    let mut response = match &outcome.failure {
        Some(f) => ApiError::from(f).into_response(),
        None => Json(outcome.client_response()).into_response(),
    };
    response.extensions_mut().insert(CompletionLogged);
    response
}

/// `background: true`: recorded `queued` and handed to a worker; the answer
/// is the queued response, or its stream (which keeps running, unlike a
/// plain stream, when the client leaves).
async fn background(app: &AppState, admitted: Admitted) -> Result<Response, ApiError> {
    let Some(runs) = app.runs.clone() else {
        return Err(ApiError::invalid(
            "Background mode is not available: this server keeps no live runs.",
        )
        .param("background"));
    };
    let Admitted {
        prepared,
        charge,
        resume: blob,
    } = admitted;
    let stream = prepared.stream();
    let (response, log) = worker::start_background(app, runs, prepared, blob, Some(charge)).await?;
    if stream {
        return Ok(resume::sse(
            resume::follow_log(log, None).boxed(),
            app.config.sse_keepalive,
        ));
    }
    Ok(Json(response).into_response())
}

//! Anthropic's Messages API as a surface: `POST /v1/messages` (JSON and
//! SSE) and `POST /v1/messages/count_tokens`. A thin adapter over the one
//! engine: the request is translated into the engine's request
//! (`request.rs`, `blocks.rs`), admitted and prepared by `intake.rs` like
//! every create, run by the one launcher, and its events or final
//! response written in Anthropic's grammar (`grammar.rs`, `answer.rs`).
//! Keys, tenants, scopes, quotas, metrics, the completion line and traces
//! are those of `/v1/responses`; nothing is stored unless
//! `[server.messages] store` is on. Errors are in Anthropic's shape
//! (`errors.rs`).

mod answer;
mod blocks;
pub mod config;
mod context_edits;
pub(crate) mod errors;
mod grammar;
mod request;
mod server_blocks;
mod server_tools;
mod sink;
mod toolsets;

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use tracing::{Instrument, Span};
use windlass_engine::{NoEvents, PreparedRun};
use windlass_protocol::anthropic::CountTokensResponse;
use windlass_protocol::CreateResponseRequest;

use crate::error::ApiError;
use crate::guard::keys::AuthedKey;
use crate::guard::limits;
use crate::intake::{self, body_error, Admitted};
use crate::metrics::Surface;
use crate::request_context::{CompletionLogged, RequestContext};
use crate::run::in_place::InPlace;
use crate::run::launch::{Keep, Launch};
use crate::sse::SseBody;
use crate::state::AppState;
use answer::Thinking;
use request::{Purpose, Translated};
use server_tools::Declared;
use sink::{MessagesSink, PING};

pub async fn create_message(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    context: Option<Extension<RequestContext>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(body_error)?;
    check_version(&headers)?;
    let req = request::parse(&bytes)?;
    let Translated {
        request,
        thinking,
        server_tools,
    } = request::translate(req, &app.config.messages, Purpose::Create)?;
    check_limits(&app, &request)?;
    let key = key.map(|Extension(k)| k);
    let refuse = |prepared: &PreparedRun| refuse_dropped(prepared, &server_tools);
    let admitted = intake::prepare_checked(&app, key.as_ref(), None, request, None, refuse).await?;
    let started = context.map_or_else(Instant::now, |Extension(c)| c.started);
    let span = Span::current();
    if admitted.prepared.stream() {
        return stream(&app, admitted, thinking, started, span);
    }
    Ok(json(&app, admitted, thinking, started, span).await)
}

/// A server tool the operator lets the gateway drop when no executor
/// serves it is still refused here: a Messages client has no header to
/// learn that its tool was left out. Checked before admission: the refusal
/// costs no request unit.
fn refuse_dropped(prepared: &PreparedRun, declared: &[Declared]) -> Result<(), ApiError> {
    let dropped = prepared.dropped_tools();
    let Some(tool) = declared
        .iter()
        .find(|d| dropped.iter().any(|k| k == d.hosted))
    else {
        return Ok(());
    };
    let path = format!("{}.type", tool.path);
    Err(ApiError::invalid(format!(
        "{path}: the server tool `{}` is not available on this server: the operator has not \
         configured Windlass's {} executor",
        tool.kind, tool.hosted
    ))
    .param(path)
    .code("unsupported_tool_type"))
}

pub async fn count_tokens(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(body_error)?;
    check_version(&headers)?;
    let req = request::parse(&bytes)?;
    let Translated { mut request, .. } =
        request::translate(req, &app.config.messages, Purpose::Count)?;
    // A count stores nothing, whatever the operator stores for creates.
    request.store = Some(false);
    check_limits(&app, &request)?;
    let key = key.map(|Extension(k)| k);
    let admitted = intake::prepare(&app, key.as_ref(), None, request, None).await?;
    let count = app
        .engine
        .count_tokens(&admitted.prepared)
        .await
        .map_err(|e| match e {
            windlass_engine::ProviderError::Unsupported { message, param } => {
                let e = ApiError::invalid(message);
                match param {
                    Some(p) => e.param(p),
                    None => e,
                }
            }
            other => ApiError::new(StatusCode::BAD_GATEWAY, "server_error", other.to_string()),
        })?;
    Ok(Json(CountTokensResponse {
        input_tokens: count.input_tokens,
    })
    .into_response())
}

/// Anthropic requires the header. Its value is a date (`2023-06-01`; the
/// current SDKs send later ones): any date is accepted, and the wire served
/// is the one in `docs/messages.md`, which later versions only extend.
fn check_version(headers: &HeaderMap) -> Result<(), ApiError> {
    let value = headers
        .get("anthropic-version")
        .map(|v| v.to_str().unwrap_or_default().trim());
    match value {
        None => Err(ApiError::invalid("anthropic-version: header is required")),
        Some(v) if is_date(v) => Ok(()),
        Some(v) => Err(ApiError::invalid(format!(
            "anthropic-version: invalid version '{v}' (a date such as 2023-06-01)"
        ))),
    }
}

/// `YYYY-MM-DD`.
fn is_date(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// The request limits `/v1/responses` applies to its body, applied to the
/// translated request (the same items, tools and strings).
fn check_limits(app: &AppState, request: &CreateResponseRequest) -> Result<(), ApiError> {
    let body = serde_json::to_vec(request).map_err(|e| ApiError::internal(e.to_string()))?;
    limits::check(&body, &app.config.limits)
        .map_err(|v| ApiError::invalid(v.message).param(v.param).code(v.code))
}

fn stream(
    app: &AppState,
    Admitted {
        prepared, charge, ..
    }: Admitted,
    thinking: Thinking,
    started: Instant,
    span: Span,
) -> Result<Response, ApiError> {
    let launch = Launch::register(app, prepared, started, Keep::Nothing, Some(charge))
        .surface(Surface::Messages);
    let cancel = launch.cancel_token().clone();
    let body = SseBody::new(app.config.sse_buffer_bytes, cancel, move |sse| {
        async move {
            let mut sink = MessagesSink::new(sse, thinking);
            launch.run(&mut sink).await;
        }
        .instrument(span)
    })
    .keep_alive_with(app.config.sse_keepalive, PING);
    let body = futures::StreamExt::map(body, Ok::<_, std::convert::Infallible>);
    let mut response = crate::sse::event_stream_response(Body::from_stream(body));
    response.extensions_mut().insert(CompletionLogged);
    Ok(response)
}

async fn json(
    app: &AppState,
    Admitted {
        prepared, charge, ..
    }: Admitted,
    thinking: Thinking,
    started: Instant,
    span: Span,
) -> Response {
    let launch = Launch::register(app, prepared, started, Keep::Nothing, Some(charge))
        .surface(Surface::Messages);
    let token = launch.cancel_token().clone();
    let run = async move { launch.run(&mut NoEvents).await };
    let outcome = InPlace::new(run.instrument(span), token).await;
    let mut response = match &outcome.failure {
        Some(f) => ApiError::from(f).into_response(),
        // As a client sees it: hosted items cut to what `include` keeps.
        None => Json(answer::message(&outcome.client_response(), thinking)).into_response(),
    };
    response.extensions_mut().insert(CompletionLogged);
    response
}

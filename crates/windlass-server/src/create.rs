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
use windlass_engine::NoEvents;
use windlass_protocol::CreateResponseRequest;

use crate::client_tools_status;
use crate::error::ApiError;
use crate::in_place::InPlace;
use crate::keys::AuthedKey;
use crate::sse::SseBody;
use crate::tenant::Tenant;
use crate::AppState;

pub async fn create_response(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(body_error)?;
    let header_status = client_tools_status::from_headers(&headers)?;
    let req: CreateResponseRequest = parse_request(&bytes)?;
    let authed = key.as_ref().map(|Extension(k)| k);
    let tenant = Tenant::of(authed);
    // Before anything runs: a refused request costs nothing upstream.
    let charge = crate::quota_gate::admit(&app, authed, tenant.as_str()).await?;
    crate::consistency::previous_not_running(&app, tenant.as_str(), &req)?;
    let mut prepared = app.engine.prepare_for(tenant.as_str(), req).await?;
    prepared.set_client_tools_status(client_tools_status::effective(
        header_status,
        authed.and_then(|k| k.client_tools_status),
        app.engine.config().client_tools_status,
    ));
    // The key's name is who the policy (governance) sees as the caller.
    prepared.set_principal(key.map(|Extension(k)| k.name));
    let cancel = CancellationToken::new();
    let registration =
        app.inflight
            .register(prepared.tenant(), prepared.response(), cancel.clone());
    let engine = app.engine.clone();

    if prepared.stream() {
        let body = SseBody::new(
            app.config.sse_buffer_bytes,
            cancel.clone(),
            |mut sink| async move {
                let outcome = engine.run(prepared, &mut sink, cancel).await;
                registration.finish(&outcome.response);
                // Charged before `[DONE]`: the client's next request sees it.
                charge.usage(&outcome.response).await;
                sink.done();
            },
        );
        let body = body.map(Ok::<_, std::convert::Infallible>);
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .header("x-accel-buffering", "no")
            .body(Body::from_stream(body))
            .map_err(|e| ApiError::internal(e.to_string()));
    }

    // Polled in place; a client that hangs up drops it, which cancels the
    // run and lets it end, stored, in a task of its own.
    let token = cancel.clone();
    let run = async move {
        let outcome = engine.run(prepared, &mut NoEvents, cancel).await;
        registration.finish(&outcome.response);
        charge.usage(&outcome.response).await;
        outcome
    };
    let outcome = InPlace::new(run, token).await;
    match &outcome.failure {
        Some(f) => Err(ApiError::from(f)),
        None => Ok(Json(outcome.response).into_response()),
    }
}

/// Parses the create body; a wrong-typed field is named in `param`.
fn parse_request(bytes: &[u8]) -> Result<CreateResponseRequest, ApiError> {
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

//! The axum application: `POST /v1/chat/completions`, `GET /v1/models`,
//! `GET /health`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::completion::completion_body;
use crate::error_body::error_body;
use crate::pump::{body_stream, sleep_or_cancel, Tail};
use crate::reply::{Reply, ReplyKind};
use crate::sse::encode;
use crate::state::{lock, unix_now, DisconnectGuard, Shared};
use crate::turn::Turn;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/responses", post(responses))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .route("/health", get(|| async { StatusCode::OK }))
        .fallback(|| async { json_response(StatusCode::NOT_FOUND, &error_body(404, "not found")) })
        // A real upstream takes what the gateway accepts (memory probes
        // send requests of tens of MB).
        .layer(axum::extract::DefaultBodyLimit::max(256 * 1024 * 1024))
        .with_state(shared)
}

fn response(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).expect("JSON values always serialize");
    response(status, "application/json", Body::from(bytes))
}

fn shutdown_response() -> Response {
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &error_body(503, "fake upstream shut down"),
    )
}

fn add_headers(mut r: Response, reply: &Reply) -> Response {
    for (name, value) in &reply.headers {
        match (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            (Ok(n), Ok(v)) => {
                r.headers_mut().append(n, v);
            }
            _ => tracing::warn!(%name, "windlass-testkit: invalid scripted header ignored"),
        }
    }
    r
}

async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let data: Vec<Value> = lock(&shared.models)
        .iter()
        .map(|id| {
            json!({
                "id": id,
                "object": "model",
                "created": shared.started,
                "owned_by": "windlass-testkit",
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({ "object": "list", "data": data }))
}

/// The vendor wire format a request came in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Chat,
    Responses,
    Anthropic,
}

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(shared, headers, body, Wire::Chat).await
}

async fn responses(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(shared, headers, body, Wire::Responses).await
}

async fn messages(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(shared, headers, body, Wire::Anthropic).await
}

/// Pops the next scripted reply and answers it in `wire`'s format.
async fn answer(shared: Arc<Shared>, headers: HeaderMap, body: Bytes, wire: Wire) -> Response {
    // Armed until the reply is fully handed over: if the client goes away
    // first, axum drops this future (or the body stream) and the guard counts.
    let mut guard = DisconnectGuard::new(shared.clone());

    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let raw = String::from_utf8_lossy(&body).into_owned();
            shared.record(headers, Value::String(raw));
            guard.disarm();
            let message = format!("invalid JSON body: {e}");
            return json_response(StatusCode::BAD_REQUEST, &error_body(400, &message));
        }
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model")
        .to_owned();
    let stream = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let reply = shared.next_reply().for_request(&request);
    shared.record(headers, request);

    if let Some(d) = reply.first_byte_delay {
        if !sleep_or_cancel(d, &shared.cancel).await {
            guard.disarm();
            return shutdown_response();
        }
    }
    if reply.stall {
        shared.cancel.cancelled().await;
        guard.disarm();
        return shutdown_response();
    }

    if let ReplyKind::Error {
        status,
        body,
        is_json,
    } = &reply.kind
    {
        guard.disarm();
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let content_type = if *is_json {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        let body = match wire {
            Wire::Anthropic if *is_json => crate::wire_anthropic::error_body(status.as_u16(), body),
            _ => body.clone(),
        };
        return add_headers(response(status, content_type, Body::from(body)), &reply);
    }

    let prefix = match wire {
        Wire::Chat => "chatcmpl-fake",
        Wire::Responses => "resp_fake",
        Wire::Anthropic => "msg_fake",
    };
    let id = format!(
        "{prefix}{}",
        shared.next_response_id.fetch_add(1, Ordering::Relaxed)
    );
    let turn = Turn::new(&reply, id, model, unix_now(), body.len(), || {
        shared.next_call_id.fetch_add(1, Ordering::Relaxed)
    });

    if !stream {
        guard.disarm();
        let body = match wire {
            Wire::Chat => completion_body(&turn),
            Wire::Responses => crate::wire_responses::response_body(&turn),
            Wire::Anthropic => crate::wire_anthropic::message_body(&turn),
        };
        return add_headers(json_response(StatusCode::OK, &body), &reply);
    }

    let frames = match wire {
        Wire::Chat => encode(&turn, include_usage),
        Wire::Responses => crate::wire_responses::encode(&turn),
        Wire::Anthropic => crate::wire_anthropic::encode(&turn),
    };
    let tail = Tail::of(&reply.end);
    let body = body_stream(
        frames,
        reply.delay_between_chunks,
        tail,
        guard,
        shared.cancel.clone(),
    );
    let mut r = response(StatusCode::OK, "text/event-stream", Body::from_stream(body));
    r.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    add_headers(r, &reply)
}

//! `POST /v1/embeddings` (OpenAI's request and answer): forwarded to the
//! upstream the model routes to in the upstream table. Errors in OpenAI's
//! shape: an unknown model is 404 `model_not_found`; an upstream's 4xx keeps
//! its status; an unreachable or failing upstream is 502 (504 on timeout).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use windlass_engine::ProviderError;
use windlass_protocol::{EmbeddingInput, EmbeddingRequest, EmbeddingResponse};

use crate::error::ApiError;
use crate::intake::{body_error, parse_json};
use crate::resources::enabled;
use crate::state::AppState;

/// OpenAI's limit on inputs in one request.
const MAX_INPUTS: usize = 2048;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/embeddings", post(create))
}

async fn create(
    State(app): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<EmbeddingResponse>, ApiError> {
    let res = enabled(app.resources.as_ref(), "Embeddings")?;
    let upstreams = res
        .embeddings
        .as_ref()
        .ok_or_else(|| ApiError::not_found("Embeddings upstream", "(none configured)"))?;
    let req: EmbeddingRequest = parse_json(&body.map_err(body_error)?)?;
    check(&req)?;
    upstreams
        .create(req)
        .await
        .map(Json)
        .map_err(upstream_error)
}

fn check(req: &EmbeddingRequest) -> Result<(), ApiError> {
    if req.model.trim().is_empty() {
        return Err(ApiError::invalid("model is required").param("model"));
    }
    let (count, empty) = match &req.input {
        EmbeddingInput::Text(t) => (1, t.is_empty()),
        EmbeddingInput::Texts(ts) => (ts.len(), ts.is_empty() || ts.iter().any(String::is_empty)),
        EmbeddingInput::Tokens(t) => (1, t.is_empty()),
        EmbeddingInput::TokenBatches(b) => (b.len(), b.is_empty() || b.iter().any(Vec::is_empty)),
    };
    if empty {
        return Err(
            ApiError::invalid("input must not be empty or contain empty strings").param("input"),
        );
    }
    if count > MAX_INPUTS {
        return Err(
            ApiError::invalid(format!("input may hold at most {MAX_INPUTS} entries"))
                .param("input"),
        );
    }
    Ok(())
}

fn upstream_error(e: ProviderError) -> ApiError {
    match e {
        ProviderError::Unsupported { message, param } => {
            let not_found = param.as_deref() == Some("model");
            let err = match not_found {
                true => ApiError::new(StatusCode::NOT_FOUND, "invalid_request_error", message)
                    .code("model_not_found"),
                false => ApiError::invalid(message),
            };
            match param {
                Some(p) => err.param(p),
                None => err,
            }
        }
        ProviderError::Status {
            status,
            message,
            code,
        } if (400..500).contains(&status) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
            let err = ApiError::new(status, "invalid_request_error", message);
            match code {
                Some(c) => err.code(c),
                None => err,
            }
        }
        ProviderError::Timeout(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "server_error",
            format!("The embeddings upstream {e}."),
        )
        .code("upstream_timeout"),
        other => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "server_error",
            format!("The embeddings upstream failed: {other}"),
        )
        .code("upstream_error"),
    }
}

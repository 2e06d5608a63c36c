//! Optional bearer-token check, and the 404 for unknown routes.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::AppState;

pub async fn require_key(State(app): State<AppState>, req: Request, next: Next) -> Response {
    if app.config.api_keys.is_empty() {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(key) if app.config.api_keys.iter().any(|k| k == key) => next.run(req).await,
        _ => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "Incorrect or missing API key.",
        )
        .code("invalid_api_key")
        .into_response(),
    }
}

pub async fn not_found(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        format!("Unknown route: {} {}", req.method(), req.uri().path()),
    )
    .code("unknown_route")
}

pub async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        format!(
            "Method {} is not allowed on {}",
            req.method(),
            req.uri().path()
        ),
    )
    .code("method_not_allowed")
}

//! The answers for unknown routes and for methods a route does not take.
//! (With keys configured, the auth layer answers 401 first, so the routes
//! cannot be mapped without a key.)

use axum::extract::Request;
use axum::http::StatusCode;

use crate::error::ApiError;

pub(crate) async fn not_found(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        format!("Unknown route: {} {}", req.method(), req.uri().path()),
    )
    .code("unknown_route")
}

pub(crate) async fn method_not_allowed(req: Request) -> ApiError {
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

//! Requests that name a response still being generated.

use axum::http::StatusCode;
use windlass_protocol::CreateResponseRequest;

use crate::error::ApiError;
use crate::state::AppState;

/// A continuation of a running response would see none of its output
/// (it is stored when it ends): a 409 saying so, not "not found".
/// Another tenant's running response is unknown here (the engine answers 400).
pub(crate) fn previous_not_running(
    app: &AppState,
    tenant: &str,
    req: &CreateResponseRequest,
) -> Result<(), ApiError> {
    let Some(prev) = req.previous_response_id.as_deref() else {
        return Ok(());
    };
    if !app.inflight.contains(tenant, prev) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::CONFLICT,
        "invalid_request_error",
        format!("Previous response with id '{prev}' is still in progress; continue it once it has ended."),
    )
    .param("previous_response_id")
    .code("previous_response_in_progress"))
}

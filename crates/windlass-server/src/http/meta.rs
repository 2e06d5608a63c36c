//! `/v1/models`, `/health`, `/ready`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::state::AppState;

pub(crate) async fn list_models(State(app): State<AppState>) -> Result<Json<Value>, ApiError> {
    let models = app.engine.provider().list_models().await.map_err(|e| {
        ApiError::new(StatusCode::BAD_GATEWAY, "server_error", e.to_string()).code("upstream_error")
    })?;
    let data: Vec<Value> = models
        .into_iter()
        .map(|m| {
            json!({
                "id": m.id,
                "object": "model",
                "created": m.created.unwrap_or(0),
                "owned_by": m.owned_by.unwrap_or_else(|| "upstream".to_owned()),
            })
        })
        .collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

pub(crate) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// Ready when the store answers and the server is not shutting down.
pub(crate) async fn ready(State(app): State<AppState>) -> (StatusCode, Json<Value>) {
    if app.lifecycle.is_draining() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "draining", "reason": "shutting down"})),
        );
    }
    match app.engine.store().ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({"status": "ready"}))),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable", "reason": e.to_string()})),
        ),
    }
}

//! `POST /v1/responses/compact`: the engine's compaction pass as JSON.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::{Extension, Json};
use tokio_util::sync::CancellationToken;
use windlass_engine::CompactError;
use windlass_protocol::{CompactRequest, CompactResource};

use crate::error::ApiError;
use crate::guard::keys::AuthedKey;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::run::in_place::InPlace;
use crate::state::AppState;

pub(crate) async fn compact_response(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<CompactResource>, ApiError> {
    let bytes = body.map_err(body_error)?;
    let req: CompactRequest = parse_json(&bytes)?;
    let key = key.map(|Extension(k)| k);
    let tenant = Tenant::of(key.as_ref());
    // The summary is a model pass: it counts against the same quotas.
    let charge = crate::guard::quota_gate::admit(&app, key.as_ref(), tenant.as_str()).await?;
    // A client that hangs up cancels the model pass.
    let cancel = CancellationToken::new();
    let engine = app.engine.clone();
    let token = cancel.clone();
    let pass = async move {
        let done = engine.compact(tenant.as_str(), req, token).await;
        if let Ok(resource) = &done {
            charge.tokens(resource.usage.total_tokens).await;
        }
        done
    };
    match InPlace::new(pass, cancel).await {
        Ok(resource) => Ok(Json(resource)),
        Err(CompactError::Refused(e)) => Err(e.into()),
        Err(CompactError::Failed(f)) => Err(ApiError::from(&f)),
    }
}

//! `POST /v1/responses/input_tokens`: the input tokens a create body would
//! send on its first model turn (instructions, the chain or conversation it
//! continues, its input and tools), counted by the upstream's tokenizer;
//! `count_method` says `upstream` or `estimate` (no tokenizer upstream).
//! Nothing runs and nothing is stored; the body is checked as a create is.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::{Extension, Json};
use windlass_engine::{CountError, CountMethod, RunContext};
use windlass_protocol::InputTokenCount;

use crate::error::ApiError;
use crate::guard::keys::AuthedKey;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_request};
use crate::state::AppState;

pub(crate) async fn count(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<InputTokenCount>, ApiError> {
    let mut req = parse_request(&body.map_err(body_error)?)?;
    let key = key.map(|Extension(k)| k);
    let tenant = Tenant::of(key.as_ref());
    let prompt = crate::prompting::resolve(&app, tenant.as_str(), &mut req).await?;
    let ctx = RunContext::for_tenant(tenant.as_str())
        .principal(key.map(|k| k.name))
        .prompt(prompt);
    let counted = match app.engine.count_input_tokens(ctx, req).await {
        Ok(c) => c,
        Err(CountError::Refused(e)) => return Err(e.into()),
        Err(CountError::Failed(f)) => return Err(ApiError::from(&f)),
    };
    let method = match counted.method {
        CountMethod::Upstream => "upstream",
        _ => "estimate",
    };
    Ok(Json(InputTokenCount {
        object: InputTokenCount::OBJECT.to_owned(),
        input_tokens: counted.input_tokens,
        count_method: Some(method.to_owned()),
    }))
}

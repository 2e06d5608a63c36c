//! The prompts API (per tenant): stored prompt templates with numbered
//! versions, which `prompt` on create names (`id`, `version`, `variables`).
//!
//! - `POST /v1/prompts` `{name?, metadata?, instructions?, input?}`: a
//!   prompt and its version "1";
//! - `GET /v1/prompts`: the tenant's prompts, newest first;
//! - `GET`/`DELETE /v1/prompts/{id}`;
//! - `POST /v1/prompts/{id}/versions` `{instructions?, input?}`: the next
//!   version, which becomes the latest;
//! - `GET /v1/prompts/{id}/versions` and `…/versions/{version}`.
//!
//! Templates use `{{name}}` placeholders; another tenant's prompt is an
//! unknown id.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use windlass_engine::PromptStore;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{Item, Prompt, PromptTemplate, PromptVersion};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::state::AppState;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    input: Option<Vec<Item>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VersionBody {
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    input: Option<Vec<Item>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct List<T> {
    object: &'static str,
    data: Vec<T>,
    has_more: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Deleted {
    id: String,
    object: &'static str,
    deleted: bool,
}

fn store(app: &AppState) -> Result<&Arc<dyn PromptStore>, ApiError> {
    app.prompts.as_ref().ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            "invalid_request_error",
            "The prompts API is not enabled on this server (it has no prompt store).",
        )
        .code("not_found")
    })
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A template with at least something in it.
fn template(
    instructions: Option<String>,
    input: Option<Vec<Item>>,
) -> Result<PromptTemplate, ApiError> {
    let template = PromptTemplate {
        instructions,
        input: input.unwrap_or_default(),
    };
    if template.instructions.is_none() && template.input.is_empty() {
        return Err(
            ApiError::invalid("A prompt version needs 'instructions' or 'input'.")
                .param("instructions")
                .code("missing_required_parameter"),
        );
    }
    Ok(template)
}

pub(crate) async fn create(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Prompt>, ApiError> {
    let store = store(&app)?;
    let body: CreateBody = parse_json(&body.map_err(body_error)?)?;
    let template = template(body.instructions, body.input)?;
    let created_at = now();
    let prompt = Prompt {
        id: new_id(prefix::PROMPT),
        object: Prompt::OBJECT.to_owned(),
        created_at,
        name: body.name,
        metadata: body.metadata.unwrap_or_default(),
        latest_version: "1".to_owned(),
    };
    let first = PromptVersion::new(&prompt.id, 1, created_at, template);
    store
        .create_prompt(tenant.as_str(), &prompt, &first)
        .await?;
    Ok(Json(prompt))
}

pub(crate) async fn add_version(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<PromptVersion>, ApiError> {
    let store = store(&app)?;
    let body: VersionBody = parse_json(&body.map_err(body_error)?)?;
    let template = template(body.instructions, body.input)?;
    store
        .add_prompt_version(tenant.as_str(), &id, &template, now())
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Prompt", &id))
}

pub(crate) async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
) -> Result<Json<List<Prompt>>, ApiError> {
    let data = store(&app)?.list_prompts(tenant.as_str()).await?;
    Ok(Json(List {
        object: "list",
        data,
        has_more: false,
    }))
}

pub(crate) async fn get(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Prompt>, ApiError> {
    store(&app)?
        .get_prompt(tenant.as_str(), &id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Prompt", &id))
}

pub(crate) async fn versions(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<List<PromptVersion>>, ApiError> {
    let data = store(&app)?
        .prompt_versions(tenant.as_str(), &id)
        .await?
        .ok_or_else(|| ApiError::not_found("Prompt", &id))?;
    Ok(Json(List {
        object: "list",
        data,
        has_more: false,
    }))
}

pub(crate) async fn version(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, version)): Path<(String, String)>,
) -> Result<Json<PromptVersion>, ApiError> {
    store(&app)?
        .prompt_version(tenant.as_str(), &id, Some(&version))
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Prompt version", &format!("{id}@{version}")))
}

pub(crate) async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    if !store(&app)?.delete_prompt(tenant.as_str(), &id).await? {
        return Err(ApiError::not_found("Prompt", &id));
    }
    Ok(Json(Deleted {
        id,
        object: "prompt.deleted",
        deleted: true,
    }))
}

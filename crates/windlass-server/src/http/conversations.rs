//! The Conversations API (OpenAI's shape): create, retrieve, update
//! metadata and delete conversations, and list, add, retrieve and delete
//! their items. Responses join one with `conversation` on create (the
//! engine reads and appends; see `windlass_engine::ConversationStore`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use windlass_engine::{with_id, Conversation, ConversationStore};
use windlass_protocol::ids::new_id;
use windlass_protocol::{Item, ItemList};

use crate::error::ApiError;
use crate::guard::tenant::Tenant;
use crate::intake::{body_error, parse_json};
use crate::item_list::{list, list_presented, ListQuery};
use crate::state::AppState;

/// OpenAI's cap on items given at creation or added at once.
const MAX_ITEMS_PER_CALL: usize = 20;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    #[serde(default)]
    items: Option<Vec<Item>>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateBody {
    metadata: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddItemsBody {
    items: Vec<Item>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Deleted {
    id: String,
    object: &'static str,
    deleted: bool,
}

fn store(app: &AppState) -> Result<&Arc<dyn ConversationStore>, ApiError> {
    app.engine
        .conversations()
        .ok_or_else(|| ApiError::not_found("Conversation", "(conversations are not enabled)"))
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found("Conversation", id)
}

fn check_metadata(metadata: &Map<String, Value>) -> Result<(), ApiError> {
    if metadata.len() > 16 || metadata.values().any(|v| !v.is_string()) {
        return Err(
            ApiError::invalid("metadata must be at most 16 string values.").param("metadata"),
        );
    }
    Ok(())
}

/// Item ids assigned, at most [`MAX_ITEMS_PER_CALL`].
fn new_items(items: Vec<Item>) -> Result<Vec<Item>, ApiError> {
    if items.len() > MAX_ITEMS_PER_CALL {
        return Err(ApiError::invalid(format!(
            "At most {MAX_ITEMS_PER_CALL} items can be added at once."
        ))
        .param("items")
        .code("array_above_max_length"));
    }
    Ok(items.into_iter().map(with_id).collect())
}

pub(crate) async fn create(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Conversation>, ApiError> {
    let bytes = body.map_err(body_error)?;
    let body: CreateBody = match bytes.is_empty() {
        true => CreateBody::default(),
        false => parse_json(&bytes)?,
    };
    let metadata = body.metadata.unwrap_or_default();
    check_metadata(&metadata)?;
    let items = new_items(body.items.unwrap_or_default())?;
    let conversation = Conversation {
        id: new_id("conv"),
        object: "conversation".to_owned(),
        created_at: crate::run::background::now_millis() / 1000,
        metadata,
    };
    store(&app)?
        .create_conversation(tenant.as_str(), &conversation, &items)
        .await?;
    Ok(Json(conversation))
}

pub(crate) async fn get(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Conversation>, ApiError> {
    store(&app)?
        .get_conversation(tenant.as_str(), &id)
        .await?
        .map(Json)
        .ok_or_else(|| not_found(&id))
}

pub(crate) async fn update(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Conversation>, ApiError> {
    let body: UpdateBody = parse_json(&body.map_err(body_error)?)?;
    check_metadata(&body.metadata)?;
    store(&app)?
        .update_conversation(tenant.as_str(), &id, &body.metadata)
        .await?
        .map(Json)
        .ok_or_else(|| not_found(&id))
}

pub(crate) async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    match store(&app)?
        .delete_conversation(tenant.as_str(), &id)
        .await?
    {
        true => Ok(Json(Deleted {
            id,
            object: "conversation.deleted",
            deleted: true,
        })),
        false => Err(not_found(&id)),
    }
}

pub(crate) async fn list_items(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<ItemList>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let (page, include) = q.page_and_include("conversation items")?;
    let page = store(&app)?
        .conversation_items(tenant.as_str(), &id, &page)
        .await?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(list_presented(page.items, page.has_more, &include)))
}

pub(crate) async fn add_items(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ItemList>, ApiError> {
    let body: AddItemsBody = parse_json(&body.map_err(body_error)?)?;
    let items = new_items(body.items)?;
    match store(&app)?
        .append_conversation_items(tenant.as_str(), &id, &items)
        .await?
    {
        true => Ok(Json(list(items, false))),
        false => Err(not_found(&id)),
    }
}

pub(crate) async fn get_item(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, item_id)): Path<(String, String)>,
) -> Result<Json<Item>, ApiError> {
    let store = store(&app)?;
    if let Some(item) = store
        .conversation_item(tenant.as_str(), &id, &item_id)
        .await?
    {
        return Ok(Json(item));
    }
    match store.get_conversation(tenant.as_str(), &id).await? {
        Some(_) => Err(ApiError::not_found("Item", &item_id)),
        None => Err(not_found(&id)),
    }
}

/// Answers with the conversation, as OpenAI does.
pub(crate) async fn delete_item(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, item_id)): Path<(String, String)>,
) -> Result<Json<Conversation>, ApiError> {
    let store = store(&app)?;
    let conversation = store
        .get_conversation(tenant.as_str(), &id)
        .await?
        .ok_or_else(|| not_found(&id))?;
    match store
        .delete_conversation_item(tenant.as_str(), &id, &item_id)
        .await?
    {
        true => Ok(Json(conversation)),
        false => Err(ApiError::not_found("Item", &item_id)),
    }
}

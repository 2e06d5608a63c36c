//! `POST /v1/responses/compact`: the request and the `CompactResource`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::items::Item;
use crate::request::Input;
use crate::response::Usage;

/// The compact request: a conversation (input, or a stored chain, or both)
/// to replace with a compaction item. `extra` keeps unknown fields so the
/// server can refuse them by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct CompactRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Input>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// Every field this struct does not name, so the route can refuse it by name.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The compacted conversation: the items to send as `input` from now on
/// instead of the history they replace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct CompactResource {
    pub id: String,
    /// Always `response.compaction`.
    pub object: String,
    pub output: Vec<Item>,
    pub created_at: u64,
    pub usage: Usage,
}

//! OpenAI's client-side tool shapes beyond plain functions: `namespace`
//! groups, `custom` (free-form input) tools and their call items, and the
//! names of OpenAI's own tool types (hosted or client-run).

use serde::{Deserialize, Serialize};

use crate::item_status::ItemStatus;
use crate::tool_output::ToolOutput;
use crate::tools::FunctionTool;

/// OpenAI's own tool types: hosted ones OpenAI runs (`web_search`,
/// `code_interpreter`, ...) and client-run ones with their own item shapes
/// (`shell`, `apply_patch`, ...). A request may carry them (Codex sends
/// `web_search`); the gateway decides per type whether it serves one.
pub const HOSTED_TOOL_TYPES: [&str; 15] = [
    "web_search",
    "web_search_2025_08_26",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "file_search",
    "code_interpreter",
    "image_generation",
    "computer",
    "computer_use_preview",
    "local_shell",
    "shell",
    "apply_patch",
    "tool_search",
    "programmatic_tool_calling",
    "computer_use",
];

/// Whether `type_name` is one of OpenAI's hosted tool types.
pub fn is_hosted_tool_type(type_name: &str) -> bool {
    HOSTED_TOOL_TYPES.contains(&type_name)
}

/// `{"type": "namespace", "name", "description", "tools": [...]}`: function
/// and custom tools grouped under one name; calls carry `namespace`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct NamespaceTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub tools: Vec<NamespacedTool>,
}

/// A tool inside a namespace: a function or a custom tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum NamespacedTool {
    Function(FunctionTool),
    Custom(CustomTool),
}

/// `{"type": "custom", "name", "description", "format"}`: a client tool whose
/// input is free-form text, optionally following a grammar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CustomTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<CustomToolFormat>,
}

/// A custom tool's input format: free text or a grammar (`lark`, `regex`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum CustomToolFormat {
    Text,
    Grammar { syntax: String, definition: String },
}

/// The model's call of a custom tool: `input` is the free-form text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CustomToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub name: String,
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// The client's result of a custom tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CustomToolCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub output: ToolOutput,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

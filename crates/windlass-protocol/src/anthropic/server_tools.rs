//! The result blocks of Anthropic's server tools (`web_search_tool_result`,
//! `code_execution_tool_result`): written by the Messages surface for the
//! hosted calls Windlass ran, and read back when a client replays them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `web_search_tool_result`'s `content`: the results, or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WebSearchToolResultContent {
    /// The search results.
    Results(Vec<WebSearchResult>),
    /// The search failed.
    Error(ToolResultError),
}

/// `{"type": "web_search_result", "url", "title", "encrypted_content",
/// "page_age"}`. `encrypted_content` is opaque to clients; Windlass puts
/// there what the model read of the result (its snippet, or an opened
/// page's text), so a replayed result reads the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct WebSearchResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    pub title: String,
    #[serde(default)]
    pub encrypted_content: String,
    #[serde(default)]
    pub page_age: Option<String>,
}

impl WebSearchResult {
    /// The result's wire `type`.
    pub const TYPE: &'static str = "web_search_result";
}

/// `{"type": "web_search_tool_result_error" | "code_execution_tool_result_error",
/// "error_code"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct ToolResultError {
    #[serde(rename = "type")]
    pub kind: String,
    pub error_code: String,
}

/// A `code_execution_tool_result`'s `content`: the run, or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CodeExecutionToolResultContent {
    /// The run's result.
    Result(CodeExecutionResult),
    /// The run failed.
    Error(ToolResultError),
}

/// `{"type": "code_execution_result", "stdout", "stderr", "return_code",
/// "content"}` (`content`: files the run wrote, by Files API id; Windlass
/// lists none there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct CodeExecutionResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub stdout: String,
    pub stderr: String,
    pub return_code: i64,
    #[serde(default)]
    pub content: Vec<Value>,
}

impl CodeExecutionResult {
    /// The result's wire `type`.
    pub const TYPE: &'static str = "code_execution_result";
}

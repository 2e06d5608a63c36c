//! Tool definitions and `tool_choice`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::apply_patch::ApplyPatchTool;
use crate::client_tools::{CustomTool, NamespaceTool};
use crate::code_interpreter::CodeInterpreterTool;
use crate::computer::ComputerUsePreviewTool;
use crate::file_search::FileSearchTool;
use crate::image_generation::ImageGenerationTool;
use crate::mcp::McpTool;
use crate::open_enum::open_enum;
use crate::shell_calls::{LocalShellTool, ShellTool};
use crate::web_search::WebSearchTool;

open_enum! {
    /// A tool the model may call.
    pub enum Tool {
        "function" => Function(FunctionTool),
        "mcp" => Mcp(McpTool),
        "namespace" => Namespace(NamespaceTool),
        "custom" => Custom(CustomTool),
        "file_search" => FileSearch(FileSearchTool),
        "web_search" => WebSearch(WebSearchTool),
        "web_search_2025_08_26" => WebSearch20250826(WebSearchTool),
        "web_search_preview" => WebSearchPreview(WebSearchTool),
        "web_search_preview_2025_03_11" => WebSearchPreview20250311(WebSearchTool),
        "code_interpreter" => CodeInterpreter(CodeInterpreterTool),
        "shell" => Shell(ShellTool),
        "local_shell" => LocalShell(LocalShellTool),
        "apply_patch" => ApplyPatch(ApplyPatchTool),
        "computer_use_preview" => ComputerUsePreview(ComputerUsePreviewTool),
        "image_generation" => ImageGeneration(ImageGenerationTool),
    }
}

impl Tool {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("tool is missing `type`".into())
    }

    /// One of OpenAI's own tool types (`web_search`, `code_interpreter`,
    /// `shell`, ...), typed or not: OpenAI runs or defines them, and a
    /// gateway decides per type whether it serves them.
    pub fn is_hosted(&self) -> bool {
        crate::client_tools::is_hosted_tool_type(self.type_name())
    }

    /// The settings of any `web_search` type (the plain and preview types
    /// and their dated aliases).
    pub fn web_search(&self) -> Option<&WebSearchTool> {
        match self {
            Tool::WebSearch(t)
            | Tool::WebSearch20250826(t)
            | Tool::WebSearchPreview(t)
            | Tool::WebSearchPreview20250311(t) => Some(t),
            _ => None,
        }
    }
}

/// A `function` tool: the client runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct FunctionTool {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Option<Value>,
    #[serde(default)]
    pub strict: Option<bool>,
}

/// `none`, `auto` or `required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ToolChoiceMode {
    None,
    #[default]
    Auto,
    Required,
}

/// `tool_choice`: a mode string or an object form.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    /// `none`, `auto` or `required`.
    Mode(ToolChoiceMode),
    /// A specific tool or set of tools.
    Object(ToolChoiceObject),
}

impl Default for ToolChoice {
    fn default() -> Self {
        ToolChoice::Mode(ToolChoiceMode::Auto)
    }
}

open_enum! {
    /// The object forms of `tool_choice`.
    pub enum ToolChoiceObject {
        "function" => Function(SpecificFunction),
        "allowed_tools" => AllowedTools(AllowedTools),
        "mcp" => Mcp(SpecificMcp),
    }
}

impl ToolChoiceObject {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("tool_choice object is missing `type`".into())
    }
}

/// `{"type": "function", "name"}`: force that function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct SpecificFunction {
    pub name: String,
}

/// `{"type": "mcp", "server_label", "name"}`: force a server's tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct SpecificMcp {
    pub server_label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `{"type": "allowed_tools"}`: restrict the model to these tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct AllowedTools {
    pub tools: Vec<ToolChoiceObject>,
    #[serde(default)]
    pub mode: ToolChoiceMode,
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::Mode(m) => m.serialize(s),
            ToolChoice::Object(o) => o.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            v @ Value::String(_) => serde_json::from_value(v)
                .map(ToolChoice::Mode)
                .map_err(|_| D::Error::custom("`tool_choice` must be one of none, auto, required")),
            v @ Value::Object(_) => serde_json::from_value(v)
                .map(ToolChoice::Object)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "`tool_choice` must be a string or an object",
            )),
        }
    }
}

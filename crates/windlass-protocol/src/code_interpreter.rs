//! The `code_interpreter` hosted tool: its definition in `tools` (which
//! container the code runs in) and the `code_interpreter_call` item.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::callers::AllowedCaller;
use crate::containers::ContainerSettings;
use crate::open_enum::{open_enum, Tagged};

/// The `include` value that keeps a `code_interpreter_call`'s `outputs`.
pub const INCLUDE_CODE_INTERPRETER_OUTPUTS: &str = "code_interpreter_call.outputs";

/// `{"type": "code_interpreter", "container": ...}` in `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CodeInterpreterTool {
    pub container: CodeInterpreterContainer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_callers: Option<Vec<AllowedCaller>>,
}

/// A container id (`cntr_...`), or `{"type": "auto", "file_ids", ...}`: a
/// new container for this request.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeInterpreterContainer {
    /// An existing container, by id.
    Id(String),
    /// `{"type": "auto", ...}`: a new container with these settings.
    Auto(ContainerSettings),
}

impl Serialize for CodeInterpreterContainer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CodeInterpreterContainer::Id(id) => s.serialize_str(id),
            CodeInterpreterContainer::Auto(settings) => Tagged {
                tag: "auto",
                inner: settings,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CodeInterpreterContainer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(id) => Ok(CodeInterpreterContainer::Id(id)),
            v @ Value::Object(_) => match v.get("type").and_then(Value::as_str) {
                Some("auto") => serde_json::from_value(v)
                    .map(CodeInterpreterContainer::Auto)
                    .map_err(|e| D::Error::custom(format!("invalid `container`: {e}"))),
                _ => Err(D::Error::custom(
                    "`container` object must have `\"type\": \"auto\"`",
                )),
            },
            _ => Err(D::Error::custom(
                "`container` must be a container id or {\"type\": \"auto\", ...}",
            )),
        }
    }
}

/// The `code_interpreter_call` output item. A stored item keeps its
/// `outputs` and `files` (the loop replays them to the model); a client sees
/// them only when it included [`INCLUDE_CODE_INTERPRETER_OUTPUTS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CodeInterpreterCall {
    pub id: String,
    #[serde(default)]
    pub code: Option<String>,
    pub container_id: String,
    #[serde(default)]
    pub outputs: Option<Vec<CodeInterpreterOutput>>,
    pub status: CodeInterpreterCallStatus,
    /// Windlass extension: the files the code wrote or changed, as listed
    /// in the container (what the model was told it produced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<CodeInterpreterFile>>,
}

impl CodeInterpreterCall {
    /// The item as a client sees it: `outputs` (and `files`) only when
    /// `include` asked for them (OpenAI answers `null` otherwise).
    pub fn present(&mut self, include: &[String]) {
        if !include
            .iter()
            .any(|i| i == INCLUDE_CODE_INTERPRETER_OUTPUTS)
        {
            self.outputs = None;
            self.files = None;
        }
    }

    /// The text of every `logs` output, joined.
    pub fn logs(&self) -> String {
        self.outputs
            .iter()
            .flatten()
            .filter_map(|o| match o {
                CodeInterpreterOutput::Logs(l) => Some(l.logs.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A `code_interpreter_call`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum CodeInterpreterCallStatus {
    InProgress,
    Interpreting,
    Completed,
    Incomplete,
    Failed,
}

open_enum! {
    /// One output of a run: its logs, or an image it made.
    pub enum CodeInterpreterOutput {
        "logs" => Logs(OutputLogs),
        "image" => Image(OutputImage),
    }
}

impl CodeInterpreterOutput {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("code interpreter output is missing `type`".into())
    }
}

/// `{"type": "logs", "logs"}`: what the run printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct OutputLogs {
    pub logs: String,
}

/// `{"type": "image", "url"}`: an image the run made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct OutputImage {
    pub url: String,
}

/// A file a run left in its container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CodeInterpreterFile {
    /// The container file's id (`cfile_...`).
    pub file_id: String,
    pub path: String,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

//! Stored prompt templates (OpenAI's `prompt` parameter and a prompts API):
//! a prompt has numbered versions, each an `instructions` text and `input`
//! items with `{{variable}}` placeholders; `prompt` on create names one
//! (`id`, optional `version`, `variables`) and [`expand`](crate::prompt_expand::expand)
//! turns it into the response's instructions and input.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::ContentPart;
use crate::items::Item;

/// `prompt` on `POST /v1/responses`, echoed on the response as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct PromptParam {
    pub id: String,
    /// A version number as a string; the latest when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
}

/// One variable's value: a string, or an input part (`input_text`,
/// `input_image`, `input_file`).
#[derive(Debug, Clone, PartialEq)]
pub enum PromptValue {
    /// A string, put in as text.
    Text(String),
    /// An input part, put in where the variable stands.
    Part(ContentPart),
}

impl PromptValue {
    /// Reads a value as a client sends it; `None` for anything else (a
    /// number, an output part), which the caller refuses by name.
    pub fn from_json(value: &Value) -> Option<PromptValue> {
        if let Value::String(s) = value {
            return Some(PromptValue::Text(s.clone()));
        }
        match serde_json::from_value::<ContentPart>(value.clone()).ok()? {
            ContentPart::InputText(t) => Some(PromptValue::Text(t.text)),
            part @ (ContentPart::InputImage(_) | ContentPart::InputFile(_)) => {
                Some(PromptValue::Part(part))
            }
            _ => None,
        }
    }
}

/// What one prompt version holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptTemplate {
    /// Instructions text with `{{variable}}` placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Items placed before the request's own input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<Item>,
}

/// A prompt as the prompts API returns it (`object: "prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// `pmpt_...`.
    pub id: String,
    /// Always [`Prompt::OBJECT`].
    pub object: String,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// Its name, if one was given.
    #[serde(default)]
    pub name: Option<String>,
    /// The caller's key-value pairs, kept as given.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The newest version's number.
    pub latest_version: String,
}

impl Prompt {
    /// The `object` of a prompt.
    pub const OBJECT: &'static str = "prompt";
}

/// One version of a prompt (`object: "prompt.version"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptVersion {
    /// The prompt's id.
    pub id: String,
    /// Always [`PromptVersion::OBJECT`].
    pub object: String,
    /// `"1"`, `"2"`, ... in the order they were made.
    pub version: String,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// The version's `instructions` and `input`, at the top level of the JSON.
    #[serde(flatten)]
    pub template: PromptTemplate,
    /// The placeholders the template uses, sorted.
    pub variables: Vec<String>,
}

impl PromptVersion {
    /// The `object` of a prompt version.
    pub const OBJECT: &'static str = "prompt.version";

    /// Version `number` of prompt `id` holding `template`.
    pub fn new(id: &str, number: u64, created_at: u64, template: PromptTemplate) -> PromptVersion {
        PromptVersion {
            id: id.to_owned(),
            object: PromptVersion::OBJECT.to_owned(),
            version: number.to_string(),
            created_at,
            variables: crate::prompt_expand::placeholders(&template)
                .into_iter()
                .collect(),
            template,
        }
    }
}

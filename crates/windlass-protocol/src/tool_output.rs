//! A tool call's output, in its own leaf module: both `items.rs` (function
//! call outputs) and `client_tools.rs` (custom tool call outputs) carry it.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::content::ContentPart;

/// A tool's output: a string, or content parts (text, images, files).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A plain string output.
    Text(String),
    /// Content parts: text, images, files.
    Parts(Vec<ContentPart>),
}

impl ToolOutput {
    /// The output as text: the text parts joined with a newline (each part
    /// is one block of a tool's result), for surfaces that carry one string.
    pub fn joined_text(&self) -> String {
        match self {
            ToolOutput::Text(t) => t.clone(),
            ToolOutput::Parts(parts) => parts
                .iter()
                .filter_map(ContentPart::text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl Serialize for ToolOutput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolOutput::Text(t) => s.serialize_str(t),
            ToolOutput::Parts(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ToolOutput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(t) => Ok(ToolOutput::Text(t)),
            v @ Value::Array(_) => serde_json::from_value(v)
                .map(ToolOutput::Parts)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "`output` must be a string or an array of content parts",
            )),
        }
    }
}

//! Content parts of messages, reasoning items and tool outputs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::open_enum::open_enum;

open_enum! {
    /// One part of a message's content.
    pub enum ContentPart {
        "input_text" => InputText(TextPart),
        "output_text" => OutputText(OutputTextPart),
        "text" => Text(TextPart),
        "summary_text" => SummaryText(TextPart),
        "reasoning_text" => ReasoningText(TextPart),
        "refusal" => Refusal(RefusalPart),
        "input_image" => InputImage(ImagePart),
        "input_file" => InputFile(FilePart),
        "input_video" => InputVideo(VideoPart),
    }
}

impl ContentPart {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("content part is missing `type`".into())
    }

    /// The text this part carries, if it is a textual part.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentPart::InputText(t)
            | ContentPart::Text(t)
            | ContentPart::SummaryText(t)
            | ContentPart::ReasoningText(t) => Some(&t.text),
            ContentPart::OutputText(t) => Some(&t.text),
            ContentPart::Refusal(r) => Some(&r.refusal),
            _ => None,
        }
    }

    /// An `input_text` part holding `text`.
    pub fn input_text(text: impl Into<String>) -> Self {
        ContentPart::InputText(TextPart { text: text.into() })
    }

    /// An `output_text` part holding `text`, without annotations or logprobs.
    pub fn output_text(text: impl Into<String>) -> Self {
        ContentPart::OutputText(OutputTextPart {
            text: text.into(),
            annotations: Vec::new(),
            logprobs: None,
        })
    }
}

/// An `input_text` part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct TextPart {
    pub text: String,
}

/// An `output_text` part: the model's text with its annotations and logprobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct OutputTextPart {
    pub text: String,
    #[serde(default)]
    pub annotations: Vec<Annotation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<LogProb>>,
}

/// A `refusal` part: the model declined to answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct RefusalPart {
    pub refusal: String,
}

/// An image part's `detail`: the resolution the model sees it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ImageDetail {
    Low,
    High,
    Auto,
}

/// An `input_image` part: by URL (or data URL) or by file id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ImagePart {
    #[serde(default)]
    pub image_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<ImageDetail>,
}

/// An `input_file` part: inline data, a URL, or a file id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct FilePart {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
}

/// An `input_video` part, by URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct VideoPart {
    pub video_url: String,
}

open_enum! {
    /// An annotation on output text.
    pub enum Annotation {
        "url_citation" => UrlCitation(UrlCitation),
        "file_citation" => FileCitation(FileCitation),
    }
}

impl Annotation {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("annotation is missing `type`".into())
    }
}

/// A citation of a web page over `start_index..end_index` of the text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct UrlCitation {
    pub url: String,
    pub start_index: u64,
    pub end_index: u64,
    pub title: String,
}

/// A citation of a file the answer drew on (`file_search`): `index` is the
/// position in the text the citation marks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct FileCitation {
    pub file_id: String,
    pub filename: String,
    pub index: u64,
}

/// The log probability of one output token, with its likeliest alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct LogProb {
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Vec<u8>,
    #[serde(default)]
    pub top_logprobs: Vec<TopLogProb>,
}

/// One alternative token in `top_logprobs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct TopLogProb {
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Vec<u8>,
}

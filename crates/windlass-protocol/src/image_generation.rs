//! OpenAI's `image_generation` hosted tool and its `image_generation_call`
//! item. Windlass serves it only when an image-capable upstream is
//! configured; the types let a request carry it and a chain replay it.

use serde::{Deserialize, Serialize};

/// `{"type": "image_generation", ...}` in `tools`. `model` and `size` are
/// free strings (new models and `WIDTHxHEIGHT` sizes keep coming).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ImageGenerationTool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ImageAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<ImageBackground>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_fidelity: Option<InputFidelity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_image_mask: Option<ImageMask>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderation: Option<ImageModeration>,
    /// 0..=100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_compression: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_format: Option<ImageFormat>,
    /// 0..=3, partial images streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_images: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<ImageQuality>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
}

/// Whether the tool generates a new image, edits one, or decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageAction {
    Generate,
    Edit,
    Auto,
}

/// The background of a generated image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageBackground {
    Transparent,
    Opaque,
    Auto,
}

/// How closely an edit keeps the input image's details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum InputFidelity {
    High,
    Low,
}

/// The mask of an edit, by file id or image URL.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ImageMask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
}

/// How strict the content moderation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageModeration {
    Auto,
    Low,
}

/// The image's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageFormat {
    Png,
    Webp,
    Jpeg,
}

/// The image's rendering quality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageQuality {
    Low,
    Medium,
    High,
    Auto,
}

/// The `image_generation_call` item: `result` is the image, base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ImageGenerationCall {
    pub id: String,
    #[serde(default)]
    pub result: Option<String>,
    pub status: ImageGenerationStatus,
}

/// An `image_generation_call`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ImageGenerationStatus {
    InProgress,
    Generating,
    Completed,
    Failed,
}

//! `POST /v1/embeddings`: OpenAI's request and response.

use serde::{Deserialize, Serialize};

/// The request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Embeddings API reference, named as it names them.
#[allow(missing_docs)]
pub struct EmbeddingRequest {
    pub model: String,
    pub input: EmbeddingInput,
    /// `float` (default) or `base64` (little-endian f32, what the OpenAI
    /// Python SDK asks for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding_format: Option<EncodingFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// A text, texts, or pre-tokenized input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EmbeddingInput {
    /// One text.
    Text(String),
    /// Several texts, one embedding each.
    Texts(Vec<String>),
    /// One input as token ids.
    Tokens(Vec<u32>),
    /// Several inputs as token ids.
    TokenBatches(Vec<Vec<u32>>),
}

/// `encoding_format`: floats, or base64 of little-endian f32s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Embeddings API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum EncodingFormat {
    Float,
    Base64,
}

/// The response body (`object: "list"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Embeddings API reference, named as it names them.
#[allow(missing_docs)]
pub struct EmbeddingResponse {
    pub object: String,
    pub data: Vec<Embedding>,
    pub model: String,
    #[serde(default)]
    pub usage: Option<EmbeddingUsage>,
}

/// One embedding (`object: "embedding"`), at `index` of the input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Embeddings API reference, named as it names them.
#[allow(missing_docs)]
pub struct Embedding {
    #[serde(default = "embedding_object")]
    pub object: String,
    pub index: usize,
    pub embedding: EmbeddingVector,
}

fn embedding_object() -> String {
    "embedding".to_owned()
}

/// Floats, or base64 of little-endian f32 when asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EmbeddingVector {
    /// `encoding_format: float`: the numbers.
    Float(Vec<f32>),
    /// `encoding_format: base64`: little-endian f32s, base64.
    Base64(String),
}

/// The tokens an embeddings request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Embeddings API reference, named as it names them.
#[allow(missing_docs)]
pub struct EmbeddingUsage {
    pub prompt_tokens: u64,
    pub total_tokens: u64,
}

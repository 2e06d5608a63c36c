//! Serde shapes of what chat completions servers send back.
//!
//! Stream chunks are parsed once per token, so their types borrow from the
//! SSE data (`Str` keeps unescaped text as a slice) and keep only the first
//! choice instead of collecting a `Vec` per chunk. Unknown fields (ids,
//! timestamps) are skipped without being built.

use std::borrow::Cow;
use std::fmt;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::logprobs::ChoiceLogprobs;

/// A JSON string borrowed from the input when it has no escapes.
///
/// Needed because serde only borrows a bare `Cow<str>` field; inside an
/// `Option` it would always allocate.
#[derive(Debug)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'a> Str<'a> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// One `chat.completion.chunk` (or an error object sent in its place).
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk<'a> {
    /// The choice with index 0; others (n > 1 is never requested) are dropped.
    #[serde(borrow, default, deserialize_with = "first_choice")]
    pub choices: Option<ChunkChoice<'a>>,
    /// Boxed (as is `error`): most chunks lack it, and a smaller `Chunk`
    /// is cheaper to move through serde's layers on every token.
    #[serde(default)]
    pub usage: Option<Box<UsageWire>>,
    /// `{"error": {...}}` (vLLM, LiteLLM) or `{"error": "..."}` (Ollama).
    #[serde(default)]
    pub error: Option<Box<Value>>,
    /// A top-level `message` (with `"object": "error"` and no `choices`):
    /// older vLLM's bare error shape.
    #[serde(borrow, default)]
    pub message: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChunkChoice<'a> {
    #[serde(default)]
    pub index: u32,
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub finish_reason: Option<Str<'a>>,
    /// vLLM's extension: the stop string that ended the text (a number
    /// when a stop token did, null otherwise).
    #[serde(default)]
    pub stop_reason: Option<Box<Value>>,
    /// Present only when log probabilities were asked for.
    #[serde(default)]
    pub logprobs: Option<Box<ChoiceLogprobs>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Delta<'a> {
    #[serde(borrow, default)]
    pub content: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub reasoning_content: Option<Str<'a>>,
    /// vLLM >= 0.10 and OpenRouter name it `reasoning`.
    #[serde(borrow, default)]
    pub reasoning: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub refusal: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCallChunk<'a>>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallChunk<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(borrow, default)]
    pub id: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub function: Option<FunctionChunk<'a>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FunctionChunk<'a> {
    #[serde(borrow, default)]
    pub name: Option<Str<'a>>,
    #[serde(borrow, default)]
    pub arguments: Option<Str<'a>>,
}

/// Reads `choices` (or `null`), keeping the first choice with index 0.
fn first_choice<'de, D>(d: D) -> Result<Option<ChunkChoice<'de>>, D::Error>
where
    D: Deserializer<'de>,
{
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<ChunkChoice<'de>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of choices")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(choice) = seq.next_element::<ChunkChoice<'de>>()? {
                if found.is_none() && choice.index == 0 {
                    found = Some(choice);
                }
            }
            Ok(found)
        }
    }
    d.deserialize_any(V)
}

/// `usage` as chat completions reports it; every field is optional because
/// servers differ (llama.cpp omits details, some send `null`s).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct UsageWire {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// A complete `chat.completion` body (non-streaming).
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub choices: Option<Vec<CompletionChoice>>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub message: Option<CompletionMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// As on [`ChunkChoice::stop_reason`].
    #[serde(default)]
    pub stop_reason: Option<Value>,
    #[serde(default)]
    pub logprobs: Option<ChoiceLogprobs>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionMessage {
    /// A string, or (rarely) an array of `{type: "text", text}` parts.
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<CompletionToolCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionToolCall {
    #[serde(default)]
    pub id: Option<String>,
    pub function: CompletionFunction,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionFunction {
    pub name: String,
    /// A JSON string per the API; some servers send the object itself.
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// `GET /models`.
#[derive(Debug, Deserialize)]
pub(crate) struct ModelList {
    pub data: Vec<ModelEntry>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ModelEntry {
    pub id: String,
    #[serde(default)]
    pub owned_by: Option<String>,
    /// Seconds since the epoch; kept loose since a bad value must not hide
    /// the whole list.
    #[serde(default)]
    pub created: Option<Value>,
}

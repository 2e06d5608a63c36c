//! Per-token log probabilities as chat completions (`choices[].logprobs.
//! content[]`) and the Responses API (`output_text.delta.logprobs`, an
//! `output_text` part's `logprobs`) send them: the same token shape, with
//! `bytes` sometimes missing or `null`.

use serde::Deserialize;
use windlass_engine::ModelEvent;
use windlass_protocol::{LogProb, TopLogProb};

/// OpenAI's value for a token too unlikely to have a finite log
/// probability (JSON has no infinity); used when an upstream sends none.
const UNLIKELY: f64 = -9999.0;

#[derive(Debug, Deserialize)]
pub(crate) struct TokenWire {
    #[serde(default)]
    token: String,
    #[serde(default)]
    logprob: Option<f64>,
    #[serde(default)]
    bytes: Option<Vec<u8>>,
    #[serde(default)]
    top_logprobs: Option<Vec<TopWire>>,
}

#[derive(Debug, Deserialize)]
struct TopWire {
    #[serde(default)]
    token: String,
    #[serde(default)]
    logprob: Option<f64>,
    #[serde(default)]
    bytes: Option<Vec<u8>>,
}

/// `choices[].logprobs` of chat completions.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChoiceLogprobs {
    #[serde(default)]
    pub content: Option<Vec<TokenWire>>,
}

/// The tokens in OpenAI's Responses shape. Without `bytes` from the
/// upstream, they are the token's UTF-8 bytes.
pub(crate) fn logprobs(tokens: Vec<TokenWire>) -> Vec<LogProb> {
    tokens
        .into_iter()
        .map(|t| LogProb {
            bytes: t.bytes.unwrap_or_else(|| t.token.as_bytes().to_vec()),
            token: t.token,
            logprob: t.logprob.unwrap_or(UNLIKELY),
            top_logprobs: t
                .top_logprobs
                .into_iter()
                .flatten()
                .map(|top| TopLogProb {
                    bytes: top.bytes.unwrap_or_else(|| top.token.as_bytes().to_vec()),
                    token: top.token,
                    logprob: top.logprob.unwrap_or(UNLIKELY),
                })
                .collect(),
        })
        .collect()
}

/// Output text, with its tokens' log probabilities when there are any.
pub(crate) fn text_event(text: String, tokens: Option<Vec<TokenWire>>) -> ModelEvent {
    match tokens.filter(|t| !t.is_empty()) {
        Some(tokens) => ModelEvent::TextDeltaLogprobs {
            delta: text,
            logprobs: logprobs(tokens),
        },
        None => ModelEvent::TextDelta(text),
    }
}

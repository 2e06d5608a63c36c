//! Input token counts and context lengths, asked of the upstream's own
//! tokenizer and model metadata where it has them.
//!
//! | tokenizer | how |
//! |---|---|
//! | llama.cpp | `POST /apply-template` (the chat body) then `POST /tokenize` of that prompt, with special tokens as a completion adds them |
//! | vLLM | `POST /tokenize` with the chat messages and tools |
//! | native | the kind's endpoint: `/responses/input_tokens`, `/messages/count_tokens` |
//! | none | an estimate: a quarter of the characters of the chat body's messages and tools |
//!
//! Context length: `context_length` in the config, else the model's entry
//! in `GET /models` (`max_model_len` as vLLM says it, `context_length`,
//! llama.cpp's `meta.n_ctx`), else llama.cpp's `GET /props` (`n_ctx` per
//! slot). A known length is kept; a failed look-up is asked again.

use serde_json::{json, Value};
use windlass_engine::{CountMethod, ModelRequest, ProviderError, TokenCount};

use crate::codec::WireCodec;
use crate::config::Tokenizer;
use crate::encode::encode_request;
use crate::provider::HttpProvider;

/// Characters per token assumed by the estimate: about right for English
/// and code with today's BPE vocabularies; it may be off by a third.
const CHARS_PER_TOKEN: usize = 4;

impl<C: WireCodec> HttpProvider<C> {
    pub(crate) async fn count(&self, request: &ModelRequest) -> Result<TokenCount, ProviderError> {
        let upstream = |input_tokens| TokenCount {
            input_tokens,
            method: CountMethod::Upstream,
        };
        match self.tokenizer().await? {
            Tokenizer::LlamaCpp => self.llama_cpp_count(request).await.map(upstream),
            Tokenizer::Vllm => self.vllm_count(request).await.map(upstream),
            Tokenizer::Native => match self.codec.count_request(request) {
                Some(built) => self.native_count(built?).await.map(upstream),
                None => estimate(request),
            },
            Tokenizer::Auto | Tokenizer::None => estimate(request),
        }
    }

    /// The configured tokenizer, or for `auto` what the server turned out
    /// to be (asked once).
    async fn tokenizer(&self) -> Result<Tokenizer, ProviderError> {
        match self.transport.cfg.tokenizer {
            Tokenizer::Auto => {}
            other => return Ok(other),
        }
        if self.codec.count_request(&ModelRequest::default()).is_some() {
            return Ok(Tokenizer::Native);
        }
        self.detected
            .get_or_try_init(|| async {
                if self.answers("/props").await? {
                    return Ok(Tokenizer::LlamaCpp);
                }
                if self.answers("/version").await? {
                    return Ok(Tokenizer::Vllm);
                }
                Ok(Tokenizer::None)
            })
            .await
            .copied()
    }

    /// Whether `GET root/path` answers with JSON; an unreachable server is
    /// an error (nothing is learnt, so nothing is kept).
    async fn answers(&self, path: &str) -> Result<bool, ProviderError> {
        let url = self.transport.root_endpoint(path)?;
        match self.transport.get_json(&url).await {
            Ok(v) => Ok(v.is_object()),
            Err(ProviderError::Status { .. } | ProviderError::Protocol(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn llama_cpp_count(&self, request: &ModelRequest) -> Result<u64, ProviderError> {
        let body = chat_body(request)?;
        let url = self.transport.root_endpoint("/apply-template")?;
        let applied = self.transport.post_json(&url, to_vec(&body)?).await?;
        let prompt = applied
            .get("prompt")
            .and_then(Value::as_str)
            .ok_or_else(|| protocol("/apply-template answered without `prompt`"))?;
        // As the server tokenizes a chat completion's prompt.
        let tokenize = json!({"content": prompt, "add_special": true, "parse_special": true});
        let url = self.transport.root_endpoint("/tokenize")?;
        let tokens = self.transport.post_json(&url, to_vec(&tokenize)?).await?;
        tokens
            .get("tokens")
            .and_then(Value::as_array)
            .map(|t| t.len() as u64)
            .ok_or_else(|| protocol("/tokenize answered without `tokens`"))
    }

    async fn vllm_count(&self, request: &ModelRequest) -> Result<u64, ProviderError> {
        let chat = chat_body(request)?;
        let mut body = json!({
            "model": request.model,
            "messages": chat["messages"],
            "add_generation_prompt": true,
        });
        if let Some(tools) = chat.get("tools") {
            body["tools"] = tools.clone();
        }
        let url = self.transport.root_endpoint("/tokenize")?;
        let answer = self.transport.post_json(&url, to_vec(&body)?).await?;
        if let Some(n) = answer.get("max_model_len").and_then(Value::as_u64) {
            self.remember_context(&request.model, n);
        }
        answer
            .get("count")
            .and_then(Value::as_u64)
            .ok_or_else(|| protocol("/tokenize answered without `count`"))
    }

    async fn native_count(&self, (path, body): (&str, Vec<u8>)) -> Result<u64, ProviderError> {
        let url = self.transport.endpoint(path)?;
        let answer = self.transport.post_json(&url, body).await?;
        answer
            .get("input_tokens")
            .and_then(Value::as_u64)
            .ok_or_else(|| protocol(&format!("{path} answered without `input_tokens`")))
    }

    pub(crate) async fn context(&self, model: &str) -> Result<Option<u64>, ProviderError> {
        if let Some(n) = self.transport.cfg.context_length {
            return Ok(Some(n));
        }
        if let Some(n) = self.known_context(model) {
            return Ok(Some(n));
        }
        let url = self.transport.endpoint("/models")?;
        let mut found = match self.transport.get_json(&url).await {
            Ok(list) => context_in_models(&list, model),
            Err(ProviderError::Status { .. } | ProviderError::Protocol(_)) => None,
            Err(e) => return Err(e),
        };
        if found.is_none() && self.tokenizer().await.ok() == Some(Tokenizer::LlamaCpp) {
            let url = self.transport.root_endpoint("/props")?;
            found = context_in_props(&self.transport.get_json(&url).await?);
        }
        if let Some(n) = found {
            self.remember_context(model, n);
        }
        Ok(found)
    }

    fn known_context(&self, model: &str) -> Option<u64> {
        let known = self.contexts.lock().unwrap_or_else(|e| e.into_inner());
        known.get(model).copied()
    }

    fn remember_context(&self, model: &str, n: u64) {
        let mut known = self.contexts.lock().unwrap_or_else(|e| e.into_inner());
        known.insert(model.to_owned(), n);
    }
}

/// The request as a chat completions body (what llama.cpp and vLLM apply
/// their chat template to).
fn chat_body(request: &ModelRequest) -> Result<Value, ProviderError> {
    let body = encode_request(request, Default::default())?;
    serde_json::to_value(&body).map_err(|e| protocol(&e.to_string()))
}

/// Windlass's estimate, for upstreams without a tokenizer.
pub(crate) fn estimate(request: &ModelRequest) -> Result<TokenCount, ProviderError> {
    let body = chat_body(request)?;
    let chars: usize = ["messages", "tools"]
        .iter()
        .filter_map(|k| body.get(*k))
        .map(|v| v.to_string().chars().count())
        .sum();
    Ok(TokenCount {
        input_tokens: chars.div_ceil(CHARS_PER_TOKEN) as u64,
        method: CountMethod::Estimate,
    })
}

/// The context length of `model` in an OpenAI-shaped model list.
pub(crate) fn context_in_models(list: &Value, model: &str) -> Option<u64> {
    let entry = list
        .get("data")?
        .as_array()?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))?;
    ["max_model_len", "context_length", "context_window"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_u64))
        .or_else(|| entry.pointer("/meta/n_ctx").and_then(Value::as_u64))
}

/// llama.cpp's `/props`: the context of one slot (what one request gets).
pub(crate) fn context_in_props(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
}

fn to_vec(v: &Value) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(v).map_err(|e| protocol(&e.to_string()))
}

fn protocol(message: &str) -> ProviderError {
    ProviderError::Protocol(message.to_owned())
}

#[cfg(test)]
#[path = "count_tests.rs"]
mod tests;

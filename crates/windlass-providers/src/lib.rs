//! Model providers for Windlass: every upstream kind is one implementation
//! of the engine's `ModelProvider` port.
//!
//! Layer: an adapter; depends on `windlass-engine` and `windlass-protocol` only,
//! never on a surface (`windlass-server`, `windlass`, `windlass-cli`) or another adapter.
//!
//! * [`ChatCompletionsProvider`]: OpenAI-compatible `/v1/chat/completions`
//!   (vLLM, llama.cpp, Ollama, LiteLLM, OpenAI).
//! * [`ResponsesProvider`]: `/v1/responses`, one stateless call per turn.
//! * [`AnthropicProvider`]: Anthropic's `/v1/messages`.
//! * [`RouterProvider`]: several upstreams, picked by model, with failover.
//!
//! The kinds share the transport ([`HttpProvider`]: retries, timeouts,
//! errors, SSE framing) and differ only in their [`WireCodec`]. Encoders and
//! decoders are pure and public so they can be tested without a network.

pub mod anthropic;
mod chat;
mod codec;
mod config;
mod count;
pub mod decode;
mod embeddings;
pub mod encode;
mod ending;
mod glob;
mod http_error;
mod logprobs;
mod messages;
mod provider;
mod pump;
pub mod responses;
mod retry;
mod router;
pub mod sse;
mod tls;
mod transport;
mod wire;

pub use anthropic::AnthropicWire;
pub use chat::ChatWire;
pub use codec::{EventDecoder, WireCodec};
pub use config::{ChatProviderConfig, MaxTokensField, Tokenizer, DEFAULT_UPSTREAM_TIMEOUT};
pub use embeddings::{EmbeddingsClient, DEFAULT_BATCH as DEFAULT_EMBEDDING_BATCH};
pub use glob::glob_match;
pub use provider::{ChatCompletionsProvider, HttpProvider};
pub use responses::ResponsesWire;
pub use router::{Failover, ModelRoute, RouterError, RouterProvider, Upstream};
pub use tls::install_crypto_provider;

/// An upstream speaking the Responses API.
pub type ResponsesProvider = HttpProvider<ResponsesWire>;
/// An upstream speaking Anthropic's Messages API.
pub type AnthropicProvider = HttpProvider<AnthropicWire>;

/// The wire format of an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamKind {
    /// `/v1/chat/completions`.
    #[default]
    Chat,
    /// `/v1/responses`.
    Responses,
    /// Anthropic `/v1/messages`.
    Anthropic,
}

/// A provider of `kind` for `cfg`.
pub fn provider_for(
    kind: UpstreamKind,
    cfg: ChatProviderConfig,
) -> Result<std::sync::Arc<dyn windlass_engine::ModelProvider>, windlass_engine::ProviderError> {
    Ok(match kind {
        UpstreamKind::Chat => std::sync::Arc::new(ChatCompletionsProvider::new(cfg)?),
        UpstreamKind::Responses => {
            std::sync::Arc::new(ResponsesProvider::with_codec(cfg, ResponsesWire)?)
        }
        UpstreamKind::Anthropic => {
            std::sync::Arc::new(AnthropicProvider::with_codec(cfg, AnthropicWire)?)
        }
    })
}

#[cfg(test)]
mod forwarding_tests;

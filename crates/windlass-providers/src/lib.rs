//! Model providers for Windlass.
//!
//! [`ChatCompletionsProvider`] speaks the OpenAI-compatible
//! `/v1/chat/completions` API that vLLM, llama.cpp, Ollama, LiteLLM and
//! OpenAI all serve. The request mapping ([`encode`]), the SSE framing
//! ([`sse`]) and the response decoding ([`decode`]) are pure and public so
//! they can be tested and benchmarked without a network.

mod config;
pub mod decode;
pub mod encode;
mod http_error;
mod messages;
mod provider;
mod pump;
mod retry;
pub mod sse;
mod wire;

pub use config::{ChatProviderConfig, MaxTokensField};
pub use provider::ChatCompletionsProvider;

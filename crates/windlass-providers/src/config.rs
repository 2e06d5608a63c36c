//! Configuration of one OpenAI-compatible upstream.

use std::path::PathBuf;
use std::time::Duration;

/// Which request field carries `max_output_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaxTokensField {
    /// `max_tokens`: what vLLM, llama.cpp and Ollama accept.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI's newer models require.
    MaxCompletionTokens,
}

/// How to reach and talk to one chat completions upstream.
/// The same settings serve every upstream kind (the name is historical).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatProviderConfig {
    /// The API root, e.g. `http://127.0.0.1:8081/v1` (a trailing slash is
    /// tolerated); `/chat/completions` and `/models` are appended to it.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// Time allowed to open the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Time allowed from sending the request until the response headers,
    /// and for a streamed turn until the first body chunk too (prefill of a
    /// long prompt happens here, so this is generous by default: see
    /// [`DEFAULT_UPSTREAM_TIMEOUT`]).
    pub first_byte_timeout: Duration,
    /// Time allowed between two body chunks once the first one arrived.
    pub idle_timeout: Duration,
    /// Extra attempts after a connect failure or a 429/502/503/504/529, made
    /// only before any response byte was accepted (a started generation is
    /// never replayed).
    pub max_retries: u32,
    /// Headers added to every request (e.g. an `OpenAI-Organization`).
    pub extra_headers: Vec<(String, String)>,
    pub max_tokens_field: MaxTokensField,
    /// A PEM bundle of extra CA certificates trusted besides the platform's
    /// store (a model server behind a private CA).
    pub ca_file: Option<PathBuf>,
    /// How this upstream counts input tokens.
    pub tokenizer: Tokenizer,
    /// The models' context length in tokens, when the upstream's model
    /// metadata does not say (or says something else than what to use).
    pub context_length: Option<u64>,
}

/// Which token counter an upstream has (`tokenize` in its config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub enum Tokenizer {
    /// chat kind: llama.cpp when the server answers `GET /props`, vLLM when
    /// it answers `GET /version`, else an estimate (asked once, then kept);
    /// responses and anthropic kinds: the kind's own endpoint.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// llama.cpp's server: `POST /apply-template` then `POST /tokenize`.
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    /// vLLM: `POST /tokenize` with the messages.
    #[serde(rename = "vllm")]
    Vllm,
    /// The kind's own endpoint: `POST /responses/input_tokens` (OpenAI),
    /// `POST /messages/count_tokens` (Anthropic).
    #[serde(rename = "native")]
    Native,
    /// No tokenizer: Windlass estimates (and says so).
    #[serde(rename = "none")]
    None,
}

impl ChatProviderConfig {
    /// Defaults for everything but the URL.
    pub fn new(base_url: impl Into<String>) -> Self {
        ChatProviderConfig {
            base_url: base_url.into(),
            ..ChatProviderConfig::default()
        }
    }
}

/// The default first-byte and idle timeouts: ten minutes, the OpenAI SDKs'
/// default request timeout (a read may wait that long), so the gateway never
/// gives up on a model its clients would still wait for. A small model on a
/// busy CPU can take minutes to prefill (more than 60 s was measured for a
/// 1.5B model on llama.cpp under load). Streams stay open meanwhile
/// (`: keep-alive` comments); an operator who wants a stalled upstream to end
/// sooner lowers these per upstream or sets a response time budget.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for ChatProviderConfig {
    /// vLLM's default address with the documented timeouts and retries.
    fn default() -> Self {
        ChatProviderConfig {
            base_url: "http://127.0.0.1:8000/v1".into(),
            api_key: None,
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            idle_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            max_retries: 2,
            extra_headers: Vec::new(),
            max_tokens_field: MaxTokensField::MaxTokens,
            ca_file: None,
            tokenizer: Tokenizer::Auto,
            context_length: None,
        }
    }
}

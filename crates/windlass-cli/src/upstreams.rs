//! The `[[upstreams]]` table: every model server the gateway routes to.
//!
//! ```toml
//! [[upstreams]]
//! name = "local"
//! kind = "chat"                  # chat (default) | responses | anthropic
//! url = "http://127.0.0.1:8081/v1"
//! models = ["qwen2.5-1.5b", "qwen-*", { name = "fast", upstream_name = "qwen2.5-0.5b" }]
//! fallbacks = ["backup"]
//! ```
//!
//! The single `--upstream URL` flag (and the older `[upstream]` table) is
//! the shorthand for one `chat` entry serving every model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use windlass_providers::{
    provider_for, ChatProviderConfig, MaxTokensField, ModelRoute, RouterError, RouterProvider,
    Tokenizer, Upstream, UpstreamKind,
};

/// One `[[upstreams]]` entry as written.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamEntry {
    pub name: String,
    #[serde(default)]
    pub kind: UpstreamKind,
    /// The API root, e.g. `https://api.anthropic.com/v1`.
    pub url: String,
    pub api_key: Option<String>,
    /// An environment variable holding the key (keeps it out of the file).
    pub api_key_env: Option<String>,
    /// Model names and globs served; empty serves every model.
    #[serde(default)]
    pub models: Vec<ModelEntry>,
    /// Upstream names tried in order when this one fails before answering.
    #[serde(default)]
    pub fallbacks: Vec<String>,
    pub connect_timeout_ms: Option<u64>,
    pub first_byte_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
    /// A PEM bundle of CAs trusted besides the platform's store.
    pub ca_file: Option<PathBuf>,
    /// Extra headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// chat kind only: `max_tokens` (default) or `max_completion_tokens`.
    pub max_tokens_field: Option<MaxTokensFieldArg>,
    /// How the upstream counts input tokens (`/v1/responses/input_tokens`,
    /// `truncation: "auto"`): `auto` (default), `llama.cpp`, `vllm`,
    /// `native`, `none` (an estimate).
    pub tokenize: Option<TokenizeArg>,
    /// The models' context length in tokens, when the upstream's model
    /// metadata does not say it.
    pub context_length: Option<u64>,
}

/// `tokenize` as written.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
pub enum TokenizeArg {
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    #[serde(rename = "vllm")]
    Vllm,
    #[serde(rename = "native")]
    Native,
    #[serde(rename = "none")]
    None,
}

impl TokenizeArg {
    pub fn tokenizer(self) -> Tokenizer {
        match self {
            TokenizeArg::Auto => Tokenizer::Auto,
            TokenizeArg::LlamaCpp => Tokenizer::LlamaCpp,
            TokenizeArg::Vllm => Tokenizer::Vllm,
            TokenizeArg::Native => Tokenizer::Native,
            TokenizeArg::None => Tokenizer::None,
        }
    }
}

/// Sets how `cfg` counts tokens and its context length, when given.
pub fn apply_tokens(
    cfg: &mut ChatProviderConfig,
    tokenize: Option<TokenizeArg>,
    context: Option<u64>,
) {
    if let Some(t) = tokenize {
        cfg.tokenizer = t.tokenizer();
    }
    if context.is_some() {
        cfg.context_length = context;
    }
}

/// A served model: a name or glob, or a name the client uses for another
/// name upstream.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ModelEntry {
    Name(String),
    Renamed { name: String, upstream_name: String },
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensFieldArg {
    MaxTokens,
    MaxCompletionTokens,
}

/// An entry resolved: key read, defaults applied.
#[derive(Debug, Clone)]
pub struct ResolvedUpstream {
    pub name: String,
    pub kind: UpstreamKind,
    pub provider: ChatProviderConfig,
    pub models: Vec<ModelRoute>,
    pub fallbacks: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("upstream `{name}`: environment variable {var} (api_key_env) is not set")]
    MissingKeyEnv { name: String, var: String },
    #[error("upstream `{0}`: set api_key or api_key_env, not both")]
    TwoKeys(String),
    #[error("upstreams: {0}")]
    Router(#[from] RouterError),
    #[error("upstream `{name}`: {error}")]
    Provider {
        name: String,
        error: windlass_engine::ProviderError,
    },
}

impl UpstreamEntry {
    pub fn resolve(self) -> Result<ResolvedUpstream, UpstreamError> {
        let api_key = match (self.api_key, self.api_key_env) {
            (Some(_), Some(_)) => return Err(UpstreamError::TwoKeys(self.name)),
            (Some(key), None) => Some(key),
            (None, Some(var)) => {
                Some(
                    std::env::var(&var).map_err(|_| UpstreamError::MissingKeyEnv {
                        name: self.name.clone(),
                        var,
                    })?,
                )
            }
            (None, None) => None,
        };
        let mut cfg = ChatProviderConfig::new(self.url);
        cfg.api_key = api_key;
        apply_timeouts(
            &mut cfg,
            self.connect_timeout_ms,
            self.first_byte_timeout_ms,
            self.idle_timeout_ms,
            self.max_retries,
        );
        cfg.ca_file = self.ca_file;
        apply_tokens(&mut cfg, self.tokenize, self.context_length);
        cfg.extra_headers = self.headers.into_iter().collect();
        if let Some(MaxTokensFieldArg::MaxCompletionTokens) = self.max_tokens_field {
            cfg.max_tokens_field = MaxTokensField::MaxCompletionTokens;
        }
        let models = self
            .models
            .into_iter()
            .map(|m| match m {
                ModelEntry::Name(pattern) => ModelRoute::exact(pattern),
                ModelEntry::Renamed {
                    name,
                    upstream_name,
                } => ModelRoute {
                    pattern: name,
                    upstream_name: Some(upstream_name),
                },
            })
            .collect();
        Ok(ResolvedUpstream {
            name: self.name,
            kind: self.kind,
            provider: cfg,
            models,
            fallbacks: self.fallbacks,
        })
    }
}

/// Sets whichever timeouts and retries are given.
pub fn apply_timeouts(
    cfg: &mut ChatProviderConfig,
    connect_ms: Option<u64>,
    first_byte_ms: Option<u64>,
    idle_ms: Option<u64>,
    max_retries: Option<u32>,
) {
    if let Some(ms) = connect_ms {
        cfg.connect_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = first_byte_ms {
        cfg.first_byte_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = idle_ms {
        cfg.idle_timeout = Duration::from_millis(ms);
    }
    if let Some(n) = max_retries {
        cfg.max_retries = n;
    }
}

/// The one-upstream shorthand: a `chat` upstream serving every model.
pub fn single(provider: ChatProviderConfig) -> ResolvedUpstream {
    ResolvedUpstream {
        name: "default".to_owned(),
        kind: UpstreamKind::Chat,
        provider,
        models: Vec::new(),
        fallbacks: Vec::new(),
    }
}

/// The router over `upstreams`, each one's HTTP client built.
pub fn build_router(upstreams: &[ResolvedUpstream]) -> Result<Arc<RouterProvider>, UpstreamError> {
    let mut built = Vec::with_capacity(upstreams.len());
    for u in upstreams {
        let provider =
            provider_for(u.kind, u.provider.clone()).map_err(|error| UpstreamError::Provider {
                name: u.name.clone(),
                error,
            })?;
        built.push(Upstream {
            name: u.name.clone(),
            provider,
            models: u.models.clone(),
            fallbacks: u.fallbacks.clone(),
        });
    }
    Ok(Arc::new(RouterProvider::new(built)?))
}

/// For the start-up log line: `name=url` per upstream.
pub fn describe(upstreams: &[ResolvedUpstream]) -> String {
    upstreams
        .iter()
        .map(|u| format!("{}={}", u.name, u.provider.base_url))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "upstreams_tests.rs"]
mod tests;

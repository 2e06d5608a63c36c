//! The `[web_search]` table: which backend serves `web_search`, where, and
//! with which key. The key is read from the environment variable the
//! config names (or, discouraged, from `api_key`); it is never logged.
//!
//! ```toml
//! [web_search]
//! provider = "searxng"              # or "brave", "tavily"
//! url = "http://127.0.0.1:8888"     # SearXNG: required; Brave/Tavily: their public API by default
//! api_key_env = "BRAVE_API_KEY"     # Brave and Tavily
//! allow_hosts = ["127.0.0.1"]       # outbound-guard exceptions for a backend on a private address
//! timeout_ms = 10000
//! language = "en"                   # SearXNG `language`, Brave `search_lang`
//! categories = "general"            # SearXNG only
//! time_range = "year"               # SearXNG only: day, month, year
//!
//! [web_search.open_page]            # fetching result pages (as [builtins.web_fetch])
//! timeout_ms = 10000
//! max_bytes = 1048576
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::backends::{Brave, Searxng, Secret, Tavily};
use super::executor::WebSearch;
use super::http::Outbound;
use super::search::SearchBackend;
use crate::builtins::fetch::Fetch;
use crate::builtins::FetchConfig;
use crate::ssrf::AllowList;

const BRAVE_URL: &str = "https://api.search.brave.com";
const TAVILY_URL: &str = "https://api.tavily.com";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WebSearchProvider {
    Searxng,
    Brave,
    Tavily,
}

#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchConfig {
    pub provider: WebSearchProvider,
    /// The backend's base URL.
    #[serde(default)]
    pub url: Option<String>,
    /// The environment variable holding the key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key itself (prefer `api_key_env`: a config file is easily shared).
    #[serde(default)]
    pub api_key: Option<String>,
    /// Host names, addresses or CIDRs the backend may be on although
    /// loopback or private.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub categories: Option<String>,
    #[serde(default)]
    pub time_range: Option<String>,
    /// Fetching result pages (`open_page`, `find_in_page`).
    #[serde(default)]
    pub open_page: FetchConfig,
}

fn default_timeout() -> u64 {
    10_000
}

impl fmt::Debug for WebSearchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSearchConfig")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("allow_hosts", &self.allow_hosts)
            .field("timeout_ms", &self.timeout_ms)
            .field("language", &self.language)
            .field("categories", &self.categories)
            .field("time_range", &self.time_range)
            .field("open_page", &self.open_page)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebSearchConfigError {
    #[error("web_search.url is required for provider searxng")]
    NoUrl,
    #[error("web_search: provider {0} needs a key: set api_key_env to the variable holding it")]
    NoKey(&'static str),
    #[error("web_search.api_key_env: the environment variable {0} is not set or empty")]
    KeyVarUnset(String),
    #[error("web_search.{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
}

impl WebSearchConfig {
    /// The key: from the named environment variable, else `api_key`.
    fn key(&self, provider: &'static str) -> Result<Secret, WebSearchConfigError> {
        if let Some(var) = &self.api_key_env {
            return match std::env::var(var) {
                Ok(k) if !k.trim().is_empty() => Ok(Secret(k.trim().to_owned())),
                _ => Err(WebSearchConfigError::KeyVarUnset(var.clone())),
            };
        }
        match &self.api_key {
            Some(k) if !k.trim().is_empty() => Ok(Secret(k.trim().to_owned())),
            _ => Err(WebSearchConfigError::NoKey(provider)),
        }
    }

    /// The backend this config names.
    pub fn backend(&self) -> Result<Arc<dyn SearchBackend>, WebSearchConfigError> {
        let allow = AllowList::parse(&self.allow_hosts).map_err(|problem| {
            WebSearchConfigError::Invalid {
                field: "allow_hosts",
                problem,
            }
        })?;
        let http = Outbound {
            allow,
            timeout: Duration::from_millis(self.timeout_ms),
        };
        if let Some(url) = &self.url {
            url::Url::parse(url).map_err(|e| WebSearchConfigError::Invalid {
                field: "url",
                problem: e.to_string(),
            })?;
        }
        let base = |default: &str| self.url.clone().unwrap_or_else(|| default.to_owned());
        Ok(match self.provider {
            WebSearchProvider::Searxng => Arc::new(Searxng {
                base: self.url.clone().ok_or(WebSearchConfigError::NoUrl)?,
                http,
                categories: self.categories.clone(),
                language: self.language.clone(),
                time_range: self.time_range.clone(),
            }),
            WebSearchProvider::Brave => Arc::new(Brave {
                base: base(BRAVE_URL),
                http,
                key: self.key("brave")?,
                language: self.language.clone(),
            }),
            WebSearchProvider::Tavily => Arc::new(Tavily {
                base: base(TAVILY_URL),
                http,
                key: self.key("tavily")?,
            }),
        })
    }

    /// The executor: the backend and the page fetcher.
    pub fn build(&self) -> Result<WebSearch, WebSearchConfigError> {
        let pages = Fetch::for_table(self.open_page.clone(), "web_search.open_page").map_err(
            |problem| WebSearchConfigError::Invalid {
                field: "open_page",
                problem,
            },
        )?;
        Ok(WebSearch::new(self.backend()?, pages))
    }
}

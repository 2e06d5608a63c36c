//! The `web_search` hosted tool (and `web_search_preview`, and their dated
//! aliases): its definition in `tools` and the `web_search_call` item.
//!
//! A stored `web_search_call` keeps what the model saw (each source's title
//! and snippet, an opened page's text), so a chain can replay it from the
//! item alone; [`WebSearchCall::present`] cuts it to what the client asked
//! for.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::open_enum::open_enum;

/// The `include` value that keeps a `web_search_call`'s `action.sources`.
pub const INCLUDE_WEB_SEARCH_SOURCES: &str = "web_search_call.action.sources";

/// `{"type": "web_search" | "web_search_2025_08_26" | "web_search_preview" |
/// "web_search_preview_2025_03_11", ...}` in `tools`. The preview types have
/// no `filters` and add `search_content_types`; one struct reads both.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct WebSearchTool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<WebSearchFilters>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_context_size: Option<SearchContextSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_location: Option<UserLocation>,
    /// `false`: cached results only, no live fetch (OpenAI's offline mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_web_access: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_content_types: Option<Vec<SearchContentType>>,
}

impl WebSearchTool {
    /// The domains results must come from (sub-domains included); empty:
    /// any.
    pub fn allowed_domains(&self) -> &[String] {
        self.filters
            .as_ref()
            .and_then(|f| f.allowed_domains.as_deref())
            .unwrap_or(&[])
    }

    /// `search_context_size`, `medium` when not given.
    pub fn context_size(&self) -> SearchContextSize {
        self.search_context_size.unwrap_or_default()
    }
}

/// `filters`: the domains a search may use.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct WebSearchFilters {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
}

/// How much of the context window search results may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum SearchContextSize {
    Low,
    #[default]
    Medium,
    High,
}

/// What a search may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum SearchContentType {
    Text,
    Image,
}

/// The user's approximate location.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct UserLocation {
    /// Always `approximate` when given.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<LocationKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2, e.g. `US`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// IANA time zone, e.g. `America/Los_Angeles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// `user_location.type`, always `approximate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum LocationKind {
    Approximate,
}

/// The `web_search_call` output item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct WebSearchCall {
    pub id: String,
    pub action: WebSearchAction,
    pub status: WebSearchCallStatus,
    /// Windlass extension: why the search failed (status `failed`), as the
    /// model was told. Never carries a backend's key or address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl WebSearchCall {
    /// The item as a client sees it: `action.sources` only when `include`
    /// asked for them, and never the page text an `open_page` or
    /// `find_in_page` stored for replay.
    pub fn present(&mut self, include: &[String]) {
        match &mut self.action {
            WebSearchAction::Search(s) => {
                if !include.iter().any(|i| i == INCLUDE_WEB_SEARCH_SOURCES) {
                    s.sources = None;
                }
            }
            WebSearchAction::OpenPage(p) => p.content = None,
            WebSearchAction::FindInPage(p) => p.content = None,
            WebSearchAction::Unknown(_) => {}
        }
    }
}

/// A `web_search_call`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum WebSearchCallStatus {
    InProgress,
    Searching,
    Completed,
    Failed,
}

open_enum! {
    /// What a `web_search_call` did.
    pub enum WebSearchAction {
        "search" => Search(SearchAction),
        "open_page" => OpenPage(OpenPageAction),
        "find_in_page" => FindInPage(FindInPageAction),
    }
}

impl WebSearchAction {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("web search action is missing `type`".into())
    }
}

/// A search: its query (or queries) and the sources it found.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct SearchAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<WebSearchSource>>,
}

/// One result of a search. OpenAI's shape is `{"type": "url", "url"}`;
/// `title` and `snippet` are Windlass extensions holding what the model
/// saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct WebSearchSource {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

impl WebSearchSource {
    /// A `url` source.
    pub fn url(url: impl Into<String>, title: Option<String>, snippet: Option<String>) -> Self {
        WebSearchSource {
            kind: "url".to_owned(),
            url: url.into(),
            title,
            snippet,
        }
    }
}

/// A result page opened (fetched).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct OpenPageAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Windlass extension, stored for replay and never shown to a client:
    /// the page text the model saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// A pattern looked for in an opened page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct FindInPageAction {
    pub url: String,
    pub pattern: String,
    /// Windlass extension, as [`OpenPageAction::content`]: the matches the
    /// model saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

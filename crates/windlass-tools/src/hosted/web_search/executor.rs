//! The `web_search` executor: one call of the model's `web_search` function
//! in, one complete `web_search_call` item out (its status `completed` or
//! `failed`, what the model saw kept in it for replay).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use windlass_protocol::{
    FindInPageAction, OpenPageAction, SearchAction, WebSearchAction, WebSearchCall,
    WebSearchCallStatus, WebSearchSource, WebSearchTool,
};

use super::search::{context_budget, domain_allowed, shape, SearchBackend, SearchQuery};
use crate::builtins::fetch::Fetch;
use crate::hosted::HostedFunction;

/// Longest query the backend is sent, in characters.
const MAX_QUERY: usize = 400;
/// Matching lines `find_in_page` returns at most, and context around each.
const MAX_MATCHES: usize = 20;
const MATCH_CONTEXT: usize = 200;

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebSearchArgs {
    Search { query: String },
    OpenPage { url: String },
    FindInPage { url: String, pattern: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgs {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    pattern: Option<String>,
}

impl WebSearchArgs {
    /// Parses the model's arguments: a `query`, a `url`, or a `url` and a
    /// `pattern`.
    pub fn parse(arguments: &str) -> Result<WebSearchArgs, String> {
        let raw: RawArgs =
            serde_json::from_str(arguments).map_err(|e| format!("invalid arguments: {e}"))?;
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        match (
            nonempty(raw.query),
            nonempty(raw.url),
            nonempty(raw.pattern),
        ) {
            (Some(query), None, None) => Ok(WebSearchArgs::Search { query }),
            (None, Some(url), None) => Ok(WebSearchArgs::OpenPage { url }),
            (None, Some(url), Some(pattern)) => Ok(WebSearchArgs::FindInPage { url, pattern }),
            _ => Err(
                "give either `query` (to search), or `url` (to open a page), or `url` and `pattern` (to find text in a page)"
                    .to_owned(),
            ),
        }
    }
}

/// `web_search` served by a search backend.
#[derive(Debug, Clone)]
pub struct WebSearch {
    backend: Arc<dyn SearchBackend>,
    pages: Arc<Fetch>,
}

impl WebSearch {
    pub fn new(backend: Arc<dyn SearchBackend>, pages: Fetch) -> WebSearch {
        WebSearch {
            backend,
            pages: Arc::new(pages),
        }
    }

    /// The backend's name (`searxng`, `brave`, `tavily`).
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// The function the model sees.
    pub fn definition() -> HostedFunction {
        HostedFunction {
            name: "web_search",
            description: "Search the web. Pass `query` to search; the results list title, URL and snippet. \
                 Pass `url` (a result's URL) to read that page, or `url` and `pattern` to find text in it. \
                 Cite the URLs of the results you use.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "url": {"type": "string", "description": "A page to open, from the results."},
                    "pattern": {"type": "string", "description": "Text to find in the page at `url`."}
                },
                "additionalProperties": false
            }),
        }
    }

    /// Runs one call. `id` is the item's id (`ws_...`); the item is always
    /// complete: a failure is status `failed` with `error` saying why.
    pub async fn run(
        &self,
        id: String,
        tool: &WebSearchTool,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> WebSearchCall {
        let args = match WebSearchArgs::parse(arguments) {
            Ok(a) => a,
            Err(e) => return failed(id, WebSearchAction::Search(SearchAction::default()), e),
        };
        match args {
            WebSearchArgs::Search { query } => self.search(id, tool, query, cancel).await,
            WebSearchArgs::OpenPage { url } => self.open(id, tool, url, None, cancel).await,
            WebSearchArgs::FindInPage { url, pattern } => {
                self.open(id, tool, url, Some(pattern), cancel).await
            }
        }
    }

    async fn search(
        &self,
        id: String,
        tool: &WebSearchTool,
        query: String,
        cancel: &CancellationToken,
    ) -> WebSearchCall {
        let query: String = query.trim().chars().take(MAX_QUERY).collect();
        let (max_results, snippet_chars) = context_budget(tool.context_size());
        let q = SearchQuery {
            query: query.clone(),
            max_results,
            allowed_domains: tool.allowed_domains().to_vec(),
            country: tool.user_location.as_ref().and_then(|l| l.country.clone()),
            deep: tool.context_size() == windlass_protocol::SearchContextSize::High,
        };
        let action = |sources| {
            WebSearchAction::Search(SearchAction {
                query: Some(query.clone()),
                queries: Some(vec![query.clone()]),
                sources,
            })
        };
        let result = tokio::select! {
            r = self.backend.search(&q) => r,
            _ = cancel.cancelled() => return failed(id, action(None), "cancelled".to_owned()),
        };
        match result {
            Ok(hits) => {
                let sources = shape(hits, &q, snippet_chars)
                    .into_iter()
                    .map(|h| WebSearchSource::url(h.url, Some(h.title), Some(h.snippet)))
                    .collect();
                WebSearchCall {
                    id,
                    action: action(Some(sources)),
                    status: WebSearchCallStatus::Completed,
                    error: None,
                }
            }
            Err(e) => {
                tracing::warn!(backend = self.backend.name(), error = %e, "web search failed");
                failed(id, action(None), e.to_string())
            }
        }
    }

    async fn open(
        &self,
        id: String,
        tool: &WebSearchTool,
        url: String,
        pattern: Option<String>,
        cancel: &CancellationToken,
    ) -> WebSearchCall {
        let action = |content: Option<String>| match &pattern {
            None => WebSearchAction::OpenPage(OpenPageAction {
                url: Some(url.clone()),
                content,
            }),
            Some(p) => WebSearchAction::FindInPage(FindInPageAction {
                url: url.clone(),
                pattern: p.clone(),
                content,
            }),
        };
        if !domain_allowed(tool.allowed_domains(), &url) {
            return failed(
                id,
                action(None),
                format!("{url} is not an http(s) URL on the domains this search may use"),
            );
        }
        let text = match self.pages.get(&url, cancel).await {
            Ok(t) => t,
            Err(e) => return failed(id, action(None), e),
        };
        let content = match &pattern {
            None => text,
            Some(p) => find(&text, p),
        };
        WebSearchCall {
            id,
            action: action(Some(content)),
            status: WebSearchCallStatus::Completed,
            error: None,
        }
    }
}

fn failed(id: String, action: WebSearchAction, error: String) -> WebSearchCall {
    WebSearchCall {
        id,
        action,
        status: WebSearchCallStatus::Failed,
        error: Some(error),
    }
}

/// The lines of `text` containing `pattern` (case-insensitive), each cut to
/// some context around the match.
fn find(text: &str, pattern: &str) -> String {
    let needle = pattern.to_lowercase();
    let found: Vec<String> = text
        .lines()
        .filter(|l| l.to_lowercase().contains(&needle))
        .take(MAX_MATCHES)
        .map(|l| {
            let l = l.trim();
            match l.char_indices().nth(MATCH_CONTEXT * 2) {
                Some((at, _)) => format!("{}…", &l[..at]),
                None => l.to_owned(),
            }
        })
        .collect();
    if found.is_empty() {
        format!("{pattern:?} does not occur in the page")
    } else {
        found.join("\n")
    }
}

/// The arguments of a `web_search` function call for a stored item, for
/// replaying it to the model.
pub fn replay_arguments(call: &WebSearchCall) -> Value {
    match &call.action {
        WebSearchAction::Search(s) => json!({"query": s.query.clone().unwrap_or_default()}),
        WebSearchAction::OpenPage(p) => json!({"url": p.url.clone().unwrap_or_default()}),
        WebSearchAction::FindInPage(p) => json!({"url": p.url, "pattern": p.pattern}),
        WebSearchAction::Unknown(v) => v.clone(),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_pick_the_action() {
        assert_eq!(
            WebSearchArgs::parse(r#"{"query":"rust"}"#).unwrap(),
            WebSearchArgs::Search {
                query: "rust".into()
            }
        );
        assert_eq!(
            WebSearchArgs::parse(r#"{"url":"https://a.test/"}"#).unwrap(),
            WebSearchArgs::OpenPage {
                url: "https://a.test/".into()
            }
        );
        assert!(matches!(
            WebSearchArgs::parse(r#"{"url":"u","pattern":"p"}"#).unwrap(),
            WebSearchArgs::FindInPage { .. }
        ));
        for bad in [
            "{}",
            r#"{"query":"q","url":"u"}"#,
            r#"{"query":"  "}"#,
            r#"{"pattern":"p"}"#,
            r#"{"q":"x"}"#,
            "not json",
        ] {
            assert!(WebSearchArgs::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn find_returns_matching_lines() {
        let page = "Intro\nTokio spawns tasks\nnothing\nUse tokio::spawn here\n";
        assert_eq!(
            find(page, "SPAWN"),
            "Tokio spawns tasks\nUse tokio::spawn here"
        );
        assert!(find(page, "zebra").contains("does not occur"));
    }
}

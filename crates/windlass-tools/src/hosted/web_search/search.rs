//! The search backend contract (a query in, hits or a typed error out) and
//! what every backend's hits go through: the context budget, the domain
//! filter and the snippet cut. In a leaf module: the backends, their HTTP
//! client, the config and the executor all build on it.

use windlass_protocol::SearchContextSize;

/// One search as a backend runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub query: String,
    /// Results wanted after filtering.
    pub max_results: usize,
    /// Hosts results must come from (sub-domains included); empty: any.
    pub allowed_domains: Vec<String>,
    /// ISO 3166-1 alpha-2 country of the user, when known.
    pub country: Option<String>,
    /// Search more thoroughly (`search_context_size: high`).
    pub deep: bool,
}

/// One result, normalised across backends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

/// Why a search failed. The message never carries a key or the backend's
/// address with credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("the search backend could not be reached: {0}")]
    Unreachable(String),
    #[error("the search backend did not answer within {0} ms")]
    Timeout(u64),
    #[error("the search backend answered HTTP {0}")]
    Status(u16),
    #[error("the search backend's answer is not what it should be: {0}")]
    Garbage(String),
    #[error("the search backend's address is refused: {0}")]
    Refused(String),
}

/// A search service.
#[async_trait::async_trait]
pub trait SearchBackend: Send + Sync + std::fmt::Debug {
    /// `searxng`, `brave`, `tavily`.
    fn name(&self) -> &'static str;

    /// Runs one search. Results may exceed `max_results` or come from other
    /// domains: [`shape`] cuts them.
    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, SearchError>;
}

/// Results and snippet characters for a context size.
pub fn context_budget(size: SearchContextSize) -> (usize, usize) {
    match size {
        SearchContextSize::Low => (3, 300),
        SearchContextSize::Medium => (5, 600),
        SearchContextSize::High => (10, 1200),
    }
}

/// The host of an http(s) URL, lower-case.
fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    parsed
        .host_str()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
}

/// Whether `url`'s host is one of `domains` or under one (an empty list
/// allows any http(s) URL).
pub fn domain_allowed(domains: &[String], url: &str) -> bool {
    let Some(host) = host_of(url) else {
        return false;
    };
    domains.is_empty()
        || domains.iter().any(|d| {
            let d = d
                .trim()
                .trim_start_matches("*.")
                .trim_end_matches('.')
                .to_ascii_lowercase();
            host == d || host.ends_with(&format!(".{d}"))
        })
}

/// The hits a client gets: http(s) only, from allowed domains, each URL
/// once, at most `max_results`, snippets cut to `snippet_chars`.
pub fn shape(hits: Vec<SearchHit>, query: &SearchQuery, snippet_chars: usize) -> Vec<SearchHit> {
    let mut seen = std::collections::HashSet::new();
    hits.into_iter()
        .filter(|h| domain_allowed(&query.allowed_domains, &h.url))
        .filter(|h| seen.insert(h.url.clone()))
        .take(query.max_results)
        .map(|mut h| {
            h.title = h.title.trim().to_owned();
            h.snippet = cut(h.snippet.trim(), snippet_chars);
            h
        })
        .collect()
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str) -> SearchHit {
        SearchHit {
            url: url.into(),
            title: " T ".into(),
            snippet: "abcdef".into(),
        }
    }

    #[test]
    fn domains_match_hosts_and_subdomains_only() {
        let d = vec!["example.org".to_owned()];
        assert!(domain_allowed(&d, "https://example.org/a"));
        assert!(domain_allowed(&d, "https://docs.Example.org./a"));
        assert!(!domain_allowed(&d, "https://badexample.org/"));
        assert!(!domain_allowed(&d, "https://example.org.evil.com/"));
        assert!(!domain_allowed(&[], "javascript:alert(1)"));
        assert!(!domain_allowed(&[], "ftp://example.org/"));
        assert!(domain_allowed(&[], "http://anything.test/"));
    }

    #[test]
    fn shape_filters_dedupes_caps_and_cuts() {
        let q = SearchQuery {
            query: "q".into(),
            max_results: 2,
            allowed_domains: vec!["a.test".into()],
            country: None,
            deep: false,
        };
        let out = shape(
            vec![
                hit("https://b.test/1"),
                hit("https://a.test/1"),
                hit("https://a.test/1"),
                hit("https://x.a.test/2"),
                hit("https://a.test/3"),
            ],
            &q,
            3,
        );
        let urls: Vec<_> = out.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(urls, ["https://a.test/1", "https://x.a.test/2"]);
        assert_eq!(out[0].snippet, "abc…");
        assert_eq!(out[0].title, "T");
        assert_eq!(cut("héllo", 10), "héllo");
        assert_eq!(cut("héllo", 2), "hé…");
    }
}

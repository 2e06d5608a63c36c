//! The three search backends: SearXNG's JSON API, Brave's Web Search API
//! and Tavily's search API, each normalised to [`SearchHit`]s. Keys never
//! appear in `Debug` output.

use std::fmt;

use serde::Deserialize;
use serde_json::{json, Value};

use super::http::{Call, Outbound};
use super::search::{SearchBackend, SearchError, SearchHit, SearchQuery};

/// A backend key; `Debug` shows only that there is one.
#[derive(Clone)]
pub(crate) struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

fn endpoint(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// `q` with a `site:` operator when exactly one domain is allowed (more
/// than one is left to the result filter: `OR` of sites is not reliable).
fn with_site(query: &SearchQuery) -> String {
    match query.allowed_domains.as_slice() {
        [one] => format!("{} site:{}", query.query, one.trim_start_matches("*.")),
        _ => query.query.clone(),
    }
}

/// How many results to ask for: more when filtering will drop some.
fn asked(query: &SearchQuery, most: usize) -> usize {
    let want = match query.allowed_domains.len() {
        0 => query.max_results,
        _ => query.max_results * 3,
    };
    want.clamp(1, most)
}

/// A `results` array of objects with `url`, `title` and the snippet under
/// `snippet_key`; entries without a URL are skipped.
fn hits(results: &Value, snippet_key: &str) -> Result<Vec<SearchHit>, SearchError> {
    #[derive(Deserialize)]
    struct Raw {
        #[serde(default)]
        url: Option<String>,
        #[serde(default)]
        title: Option<String>,
        #[serde(flatten)]
        rest: serde_json::Map<String, Value>,
    }
    let raw: Vec<Raw> = serde_json::from_value(results.clone())
        .map_err(|e| SearchError::Garbage(format!("`results` is not a list of results ({e})")))?;
    Ok(raw
        .into_iter()
        .filter_map(|r| {
            Some(SearchHit {
                url: r.url?,
                title: r.title.unwrap_or_default(),
                snippet: r
                    .rest
                    .get(snippet_key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
        })
        .collect())
}

/// SearXNG (self-hosted): `GET {url}/search?q=...&format=json`. Its
/// settings must enable the `json` format.
#[derive(Debug)]
pub struct Searxng {
    pub(crate) base: String,
    pub(crate) http: Outbound,
    pub(crate) categories: Option<String>,
    pub(crate) language: Option<String>,
    pub(crate) time_range: Option<String>,
}

#[async_trait::async_trait]
impl SearchBackend for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, SearchError> {
        let mut params = vec![("q", with_site(query)), ("format", "json".to_owned())];
        for (k, v) in [
            ("categories", &self.categories),
            ("language", &self.language),
            ("time_range", &self.time_range),
        ] {
            if let Some(v) = v {
                params.push((k, v.clone()));
            }
        }
        let answer = self
            .http
            .json(&endpoint(&self.base, "/search"), Call::Get(&params), &[])
            .await?;
        let results = answer
            .get("results")
            .ok_or_else(|| SearchError::Garbage("no `results` in the answer".into()))?;
        hits(results, "content")
    }
}

/// Brave Web Search: `GET {url}/res/v1/web/search` with the key in
/// `X-Subscription-Token`.
#[derive(Debug)]
pub struct Brave {
    pub(crate) base: String,
    pub(crate) http: Outbound,
    pub(crate) key: Secret,
    pub(crate) language: Option<String>,
}

#[async_trait::async_trait]
impl SearchBackend for Brave {
    fn name(&self) -> &'static str {
        "brave"
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, SearchError> {
        let mut params = vec![
            ("q", with_site(query)),
            ("count", asked(query, 20).to_string()),
        ];
        if let Some(country) = &query.country {
            params.push(("country", country.to_ascii_uppercase()));
        }
        if let Some(lang) = &self.language {
            params.push(("search_lang", lang.clone()));
        }
        let answer = self
            .http
            .json(
                &endpoint(&self.base, "/res/v1/web/search"),
                Call::Get(&params),
                &[("X-Subscription-Token", &self.key.0)],
            )
            .await?;
        // A search without web results has no `web` section.
        match (
            answer.get("web"),
            answer.get("type").and_then(Value::as_str),
        ) {
            (Some(web), _) => hits(
                web.get("results")
                    .ok_or_else(|| SearchError::Garbage("no `web.results` in the answer".into()))?,
                "description",
            ),
            (None, Some("search")) => Ok(Vec::new()),
            (None, _) => Err(SearchError::Garbage("no `web` in the answer".into())),
        }
    }
}

/// Tavily: `POST {url}/search` with the key as a bearer token.
#[derive(Debug)]
pub struct Tavily {
    pub(crate) base: String,
    pub(crate) http: Outbound,
    pub(crate) key: Secret,
}

#[async_trait::async_trait]
impl SearchBackend for Tavily {
    fn name(&self) -> &'static str {
        "tavily"
    }

    async fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, SearchError> {
        let mut body = json!({
            "query": query.query,
            "max_results": asked(query, 20),
            "search_depth": if query.deep { "advanced" } else { "basic" },
            "topic": "general",
        });
        if !query.allowed_domains.is_empty() {
            body["include_domains"] = json!(query.allowed_domains);
        }
        let auth = format!("Bearer {}", self.key.0);
        let answer = self
            .http
            .json(
                &endpoint(&self.base, "/search"),
                Call::Post(&body),
                &[("Authorization", &auth)],
            )
            .await?;
        let results = answer
            .get("results")
            .ok_or_else(|| SearchError::Garbage("no `results` in the answer".into()))?;
        hits(results, "content")
    }
}

//! Searching vector stores for a request: the checks OpenAI makes, the query
//! embedded when an embedding model is configured, the store's hybrid
//! search, and the answer in the wire shapes of the search endpoint and of
//! the `file_search_call` item.

use std::sync::Arc;

use windlass_engine::{
    ChunkQuery, Embedder, QueryEmbedding, SearchOutcome, Searched, StoreError, VectorStoreStore,
};
use windlass_protocol::{
    FileSearchResult, Filter, RankingOptions, SearchResult, SearchResultsPage, TextContent,
    DEFAULT_NUM_RESULTS, MAX_NUM_RESULTS, OBJECT_SEARCH_PAGE,
};

/// A search as the endpoint and the tool ask for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchParams {
    pub vector_store_ids: Vec<String>,
    /// One or more natural-language queries (searched together).
    pub queries: Vec<String>,
    pub filter: Option<Filter>,
    pub max_num_results: Option<u32>,
    pub ranking_options: Option<RankingOptions>,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The request is wrong (a 400): the message, and the parameter.
    #[error("{message}")]
    Invalid {
        message: String,
        param: &'static str,
    },
    /// One of the stores is unknown to this tenant (a 404).
    #[error("vector store not found")]
    UnknownStore,
    /// This store's `expires_after` has passed (a 400): nothing searched.
    #[error("vector store {0} has expired")]
    Expired(String),
    /// The embedding upstream failed: no silent fallback to keywords.
    #[error("embedding the query failed: {0}")]
    Embedding(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Checks a search's parameters (OpenAI's bounds).
pub fn check(params: &SearchParams) -> Result<(), SearchError> {
    let invalid = |message: &str, param| SearchError::Invalid {
        message: message.to_owned(),
        param,
    };
    if params.vector_store_ids.is_empty() {
        return Err(invalid(
            "at least one vector store id is required",
            "vector_store_ids",
        ));
    }
    if params.queries.iter().all(|q| q.trim().is_empty()) {
        return Err(invalid("the query is empty", "query"));
    }
    if let Some(n) = params.max_num_results {
        if !(1..=MAX_NUM_RESULTS).contains(&n) {
            return Err(invalid(
                "max_num_results must be between 1 and 50",
                "max_num_results",
            ));
        }
    }
    let ranking = params.ranking_options.as_ref();
    if let Some(t) = ranking.and_then(|r| r.score_threshold) {
        if !(0.0..=1.0).contains(&t) {
            return Err(invalid(
                "ranking_options.score_threshold must be between 0 and 1",
                "ranking_options.score_threshold",
            ));
        }
    }
    if let Some(h) = ranking.and_then(|r| r.hybrid_search) {
        let ok = |w: f64| w.is_finite() && w >= 0.0;
        if !ok(h.embedding_weight)
            || !ok(h.text_weight)
            || h.embedding_weight + h.text_weight == 0.0
        {
            return Err(invalid(
                "hybrid_search weights must be non-negative and not both zero",
                "ranking_options.hybrid_search",
            ));
        }
    }
    Ok(())
}

/// Searches vector stores of one tenant.
#[derive(Clone)]
pub struct Searcher {
    stores: Arc<dyn VectorStoreStore>,
    embedder: Option<Arc<dyn Embedder>>,
}

impl Searcher {
    pub fn new(stores: Arc<dyn VectorStoreStore>, embedder: Option<Arc<dyn Embedder>>) -> Searcher {
        Searcher { stores, embedder }
    }

    /// Runs `params` (checked here) for `tenant`, and records the use of
    /// its stores (`last_active_at`). A store whose
    /// `expires_after` has run out by now is refused
    /// ([`SearchError::Expired`]), even before the expiry sweep marks it.
    /// The query is embedded only when an embedding model is configured;
    /// stores embedded by that model are then searched hybrid, the others
    /// by keyword ([`SearchOutcome::mode`] tells which).
    pub async fn search(
        &self,
        tenant: &str,
        params: &SearchParams,
    ) -> Result<SearchOutcome, SearchError> {
        check(params)?;
        let text = params.queries.join("\n");
        let embedding = match &self.embedder {
            None => None,
            Some(e) => {
                let mut v = e
                    .embed(std::slice::from_ref(&text))
                    .await
                    .map_err(|err| SearchError::Embedding(err.to_string()))?;
                let vector = v
                    .pop()
                    .ok_or_else(|| SearchError::Embedding("no vector returned".into()))?;
                Some(QueryEmbedding {
                    model: e.model().to_owned(),
                    vector,
                })
            }
        };
        let ranking = params.ranking_options.clone().unwrap_or_default();
        let query = ChunkQuery {
            vector_store_ids: params.vector_store_ids.clone(),
            text,
            embedding,
            filter: params.filter.clone(),
            limit: params.max_num_results.unwrap_or(DEFAULT_NUM_RESULTS) as usize,
            score_threshold: ranking.score_threshold,
            weights: ranking.hybrid_search,
            now: unix_now(),
        };
        let outcome = match self.stores.search(tenant, &query).await? {
            Searched::Done(outcome) => outcome,
            Searched::UnknownStore => return Err(SearchError::UnknownStore),
            Searched::Expired(id) => return Err(SearchError::Expired(id)),
        };
        // A search is use: it moves `last_active_at`, which anchors expiry,
        // whether the route or the `file_search` tool ran it.
        self.stores
            .touch_vector_stores(tenant, &params.vector_store_ids, query.now)
            .await?;
        Ok(outcome)
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The answer of `POST /v1/vector_stores/{id}/search`.
pub fn results_page(queries: Vec<String>, outcome: &SearchOutcome) -> SearchResultsPage {
    SearchResultsPage {
        object: OBJECT_SEARCH_PAGE.to_owned(),
        search_query: queries,
        data: outcome
            .hits
            .iter()
            .map(|h| SearchResult {
                file_id: h.file_id.clone(),
                filename: h.filename.clone(),
                score: h.score,
                attributes: Some(h.attributes.clone()),
                content: vec![TextContent::new(h.text.clone())],
            })
            .collect(),
        has_more: false,
        next_page: None,
    }
}

/// The `results` of a `file_search_call` item.
pub fn call_results(outcome: &SearchOutcome) -> Vec<FileSearchResult> {
    outcome
        .hits
        .iter()
        .map(|h| FileSearchResult {
            file_id: Some(h.file_id.clone()),
            filename: Some(h.filename.clone()),
            score: Some(h.score),
            text: Some(h.text.clone()),
            attributes: Some(h.attributes.clone()),
        })
        .collect()
}

//! The executors of the hosted tools `serve` offers: `file_search` over the
//! store's vector stores (always: keyword search, hybrid when an embedder
//! is given), `web_search` when `[web_search]` names a backend, and which
//! unserved tool types a request may carry anyway (`[hosted]`).
//!
//! ```toml
//! [hosted]
//! # A request naming a tool type nothing serves here:
//! unserved = "refuse"     # 400 unsupported_tool_type (default), or "drop":
//!                         # left out, named in x-windlass-dropped-tools
//! drop = ["web_search"]   # with "refuse": types dropped anyway (default:
//!                         # web_search, which Codex CLI sends every time)
//! ```

use std::sync::Arc;

use serde::Deserialize;
use windlass_engine::{Embedder, ToolExecutor, VectorStoreStore};
use windlass_retrieval::{FileSearchExecutor, Searcher};
use windlass_tools::hosted::web_search::{WebSearchConfig, WebSearchConfigError};

/// `[hosted]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostedFile {
    /// `refuse` (default) or `drop`: what happens to a request's hosted
    /// tool type that nothing here serves.
    pub unserved: Option<Unserved>,
    /// With `refuse`: hosted types dropped anyway (default `["web_search"]`,
    /// covering the preview type and dated aliases).
    pub drop: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unserved {
    Refuse,
    Drop,
}

impl HostedFile {
    /// The engine's `drop_unserved_hosted`.
    pub fn drop_list(&self) -> Vec<String> {
        match self.unserved {
            Some(Unserved::Drop) => vec!["*".to_owned()],
            _ => self
                .drop
                .clone()
                .unwrap_or_else(|| vec!["web_search".to_owned()]),
        }
    }
}

/// `file_search` over `store`'s vector stores; the query is embedded when
/// `embedder` is given (hybrid search), else the search is by keyword.
pub fn retrieval_executor(
    store: Arc<dyn VectorStoreStore>,
    embedder: Option<Arc<dyn Embedder>>,
) -> Arc<dyn ToolExecutor> {
    Arc::new(FileSearchExecutor::new(Searcher::new(store, embedder)))
}

/// `web_search` over the configured backend, if `[web_search]` is set.
pub fn web_search_executor(
    config: Option<&WebSearchConfig>,
) -> Result<Option<Arc<dyn ToolExecutor>>, WebSearchConfigError> {
    let Some(config) = config else {
        return Ok(None);
    };
    let search = config.build()?;
    tracing::info!(backend = search.backend_name(), "web_search served");
    Ok(Some(Arc::new(search)))
}

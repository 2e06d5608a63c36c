//! The `file_search` hosted tool's executor: one call of the model's
//! `file_search(query)` in, one complete `file_search_call` out, searched in
//! the request tool's `vector_store_ids` of the run's tenant only, with its
//! `filters`, `max_num_results` and `ranking_options`.
//!
//! A vector store id that is unknown to the tenant (another tenant's
//! included: it is the same answer) fails the call — status `failed`,
//! `error: "vector store not found"` — and the model is told so; the request
//! itself is not refused, as OpenAI only learns it when the search runs.
//! A store whose `expires_after` has passed fails the call the same way
//! (`error: "vector store vs_… has expired: …"`), from the moment it
//! expires, not only once the expiry sweep has emptied it: none of the
//! call's stores is searched.

use async_trait::async_trait;
use windlass_engine::{
    ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolOrigin,
    ToolResult,
};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::{FileSearchCall, FileSearchCallStatus, Item, Tool};

use crate::search::{call_results, SearchError, SearchParams, Searcher};

/// Runs `file_search` calls with a [`Searcher`] (keyword-only when it has
/// no embedder).
#[derive(Clone)]
pub struct FileSearchExecutor {
    searcher: Searcher,
}

impl FileSearchExecutor {
    pub fn new(searcher: Searcher) -> FileSearchExecutor {
        FileSearchExecutor { searcher }
    }

    /// The complete item of one call.
    pub async fn run(
        &self,
        tenant: &str,
        id: String,
        tool: &windlass_protocol::FileSearchTool,
        arguments: &str,
    ) -> FileSearchCall {
        let query = match query_of(arguments) {
            Ok(q) => q,
            Err(e) => return failed(id, Vec::new(), e),
        };
        let params = SearchParams {
            vector_store_ids: tool.vector_store_ids.clone(),
            queries: vec![query.clone()],
            filter: tool.filters.clone(),
            max_num_results: tool.max_num_results,
            ranking_options: tool.ranking_options.clone(),
        };
        match self.searcher.search(tenant, &params).await {
            Ok(outcome) => FileSearchCall {
                id,
                queries: vec![query],
                status: FileSearchCallStatus::Completed,
                results: Some(call_results(&outcome)),
                error: None,
            },
            Err(e) => {
                if let SearchError::Store(err) = &e {
                    tracing::warn!(error = %err, "file search failed in the store");
                }
                failed(id, vec![query], reason(&e))
            }
        }
    }
}

/// What the model (and the item) is told of a failure: never a store's
/// internals.
fn reason(e: &SearchError) -> String {
    match e {
        SearchError::Invalid { message, .. } => message.clone(),
        SearchError::UnknownStore => "vector store not found".to_owned(),
        SearchError::Expired(id) => {
            format!("vector store {id} has expired: its files can no longer be searched")
        }
        SearchError::Embedding(_) => "the search could not embed the query".to_owned(),
        SearchError::Store(_) => "the search failed in the store".to_owned(),
    }
}

fn query_of(arguments: &str) -> Result<String, String> {
    let v: serde_json::Value =
        serde_json::from_str(arguments).map_err(|e| format!("invalid arguments: {e}"))?;
    match v.get("query").and_then(|q| q.as_str()) {
        Some(q) if !q.trim().is_empty() => Ok(q.trim().to_owned()),
        _ => Err("give a non-empty `query`".to_owned()),
    }
}

fn failed(id: String, queries: Vec<String>, error: String) -> FileSearchCall {
    FileSearchCall {
        id,
        queries,
        status: FileSearchCallStatus::Failed,
        results: None,
        error: Some(error),
    }
}

#[async_trait]
impl ToolExecutor for FileSearchExecutor {
    fn kind(&self) -> ToolKind {
        ToolKind::Hosted
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        matches!(&tool.origin, ToolOrigin::Hosted(h) if h.kind == HostedKind::FileSearch)
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let Some(hosted) = &ctx.hosted else {
            return Err(ToolError::Failed(
                "file_search runs as a hosted call".into(),
            ));
        };
        let Tool::FileSearch(tool) = &hosted.tool.tool else {
            return Err(ToolError::Failed("not a file_search tool".into()));
        };
        let search = self.run(&ctx.tenant, hosted.item_id.clone(), tool, &call.arguments);
        let item = tokio::select! {
            item = search => item,
            _ = ctx.cancel.cancelled() => failed(hosted.item_id.clone(), Vec::new(), "cancelled".into()),
        };
        Ok(ToolResult::hosted(Item::FileSearchCall(item)))
    }
}

//! `WebSearch` as the loop's executor for the `web_search` hosted types
//! (`web_search`, `web_search_preview` and their dated aliases): the call's
//! item id and the request's tool come with the call; the answer is the
//! complete `web_search_call`.

use async_trait::async_trait;
use windlass_engine::{
    ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolOrigin,
    ToolResult,
};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::Item;

use super::executor::WebSearch;

#[async_trait]
impl ToolExecutor for WebSearch {
    fn kind(&self) -> ToolKind {
        ToolKind::Hosted
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        matches!(&tool.origin, ToolOrigin::Hosted(h) if h.kind == HostedKind::WebSearch)
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let Some(hosted) = &ctx.hosted else {
            return Err(ToolError::Failed("web_search runs as a hosted call".into()));
        };
        let Some(tool) = hosted.tool.tool.web_search() else {
            return Err(ToolError::Failed("not a web_search tool".into()));
        };
        let item = self
            .run(hosted.item_id.clone(), tool, &call.arguments, &ctx.cancel)
            .await;
        Ok(ToolResult::hosted(Item::WebSearchCall(item)))
    }
}

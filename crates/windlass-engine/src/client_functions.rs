//! Seed 001's function-tool executor: it claims the request's function tools
//! for the client, so their calls end the response with `requires_action`.

use crate::ports::tools::{
    ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolOrigin,
    ToolResult,
};

#[derive(Debug, Default, Clone, Copy)]
pub struct ClientFunctions;

#[async_trait::async_trait]
impl ToolExecutor for ClientFunctions {
    fn kind(&self) -> ToolKind {
        ToolKind::Function
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        tool.origin == ToolOrigin::Function
    }

    async fn execute(&self, _ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        // The engine returns these calls to the client and never runs them here.
        Err(ToolError::Failed(format!(
            "'{}' is executed by the client",
            call.name
        )))
    }
}

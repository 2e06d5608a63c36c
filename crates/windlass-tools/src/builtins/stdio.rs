//! The built-in tools as an MCP server on stdio (`windlass mcp`), for other
//! agents. The same tools, limits and sandbox as in the gateway; an
//! optional policy (the governance gate) is asked before each call, with no
//! principal. A call that would need an approval is refused: stdio has no
//! one to ask.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    CallDecision, Policy, PolicyContext, ToolCall, ToolDefinition, ToolOrigin, ToolResult,
};
use windlass_protocol::ToolOutput;

use super::toolset::{Builtins, BUILTIN_LABEL};

/// The MCP server handler over the enabled built-ins.
pub struct StdioServer {
    builtins: Arc<Builtins>,
    policy: Option<Arc<dyn Policy>>,
    metadata: Map<String, Value>,
    /// Each connection is one "response" for the policy's budgets.
    session: String,
}

impl StdioServer {
    pub fn new(builtins: Arc<Builtins>, policy: Option<Arc<dyn Policy>>) -> StdioServer {
        StdioServer {
            builtins,
            policy,
            metadata: Map::new(),
            session: format!("stdio_{}", std::process::id()),
        }
    }

    /// Serves on stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP handshake failed: {e}"))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("MCP server stopped: {e}"))
    }

    async fn gate(&self, name: &str, arguments: &str) -> Result<String, String> {
        let Some(policy) = &self.policy else {
            return Ok(arguments.to_owned());
        };
        let def = ToolDefinition {
            name: format!("{BUILTIN_LABEL}__{name}"),
            description: None,
            parameters: Value::Null,
            strict: None,
            origin: ToolOrigin::Mcp {
                server_label: BUILTIN_LABEL.to_owned(),
                name: name.to_owned(),
            },
        };
        let ctx = PolicyContext {
            response_id: &self.session,
            model: "",
            turn: 0,
            principal: None,
            metadata: &self.metadata,
            approved: false,
        };
        let call = ToolCall {
            call_id: String::new(),
            name: def.name.clone(),
            arguments: arguments.to_owned(),
        };
        match policy.before_call(&ctx, &call, Some(&def)).await {
            CallDecision::Allow => Ok(arguments.to_owned()),
            CallDecision::AllowWithArguments(a) => Ok(a),
            CallDecision::Deny { reason } => Err(format!("Error: tool '{name}' was blocked: {reason}")),
            CallDecision::RequireApproval => Err(format!(
                "Error: tool '{name}' needs a human approval, which this stdio server cannot ask for"
            )),
            // A verdict this server does not know is not a permission.
            _ => Err(format!("Error: tool '{name}' was not allowed")),
        }
    }
}

fn to_mcp(tool: windlass_protocol::McpToolInfo) -> Result<Tool, ErrorData> {
    let value = serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": tool.annotations,
    });
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn result(r: ToolResult) -> CallToolResult {
    let text = match r.output {
        ToolOutput::Text(t) => t,
        other => serde_json::to_string(&other).unwrap_or_default(),
    };
    let content = vec![ContentBlock::text(text)];
    if r.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl ServerHandler for StdioServer {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.instructions = Some("Windlass built-in tools: shell (sandboxed), files inside the configured roots, web_fetch.".to_owned());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .builtins
            .tools()
            .into_iter()
            .map(to_mcp)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let arguments = match self.gate(&request.name, &arguments).await {
            Ok(a) => a,
            Err(refusal) => return Ok(result(ToolResult::error(refusal)).into()),
        };
        let cancel: CancellationToken = context.ct.clone();
        match self.builtins.call(&request.name, &arguments, &cancel).await {
            Ok(r) => Ok(result(r).into()),
            Err(e) => Err(ErrorData::invalid_params(e, None)),
        }
    }
}

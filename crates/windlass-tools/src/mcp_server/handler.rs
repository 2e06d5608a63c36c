//! [`GatewayMcpServer`]: the rmcp server handler over the gateway's MCP hub
//! (configured servers plus the built-ins), one instance per MCP session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::join_all;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use windlass_engine::{mcp_tool_name, McpHub, McpServerRef, ToolResult};
use windlass_protocol::{McpToolInfo, ToolOutput};

use super::gate::{CallOutcome, GateVerdict, GatewayCall, McpCaller, McpGate};

/// What every session of the endpoint shares.
struct Shared {
    hub: Arc<dyn McpHub>,
    /// The servers served, in order (the built-ins' label among them when
    /// enabled).
    labels: Vec<String>,
    gate: Arc<dyn McpGate>,
    /// The caller when no HTTP request carries one (stdio, in-process).
    fixed_caller: Option<McpCaller>,
}

/// The MCP server handler. Clone-free: [`new_session`](Self::new_session)
/// makes the handler of another session over the same hub and gate.
pub struct GatewayMcpServer {
    shared: Arc<Shared>,
    /// This session's id: the "response" budgets are counted against.
    session: String,
    /// The first caller of the session; later requests from another key or
    /// tenant are refused (a leaked session id is no use to them).
    bound: OnceLock<McpCaller>,
    /// Client-facing name -> (label, tool on its server), from listings.
    names: Mutex<HashMap<String, (String, String)>>,
}

impl GatewayMcpServer {
    /// Serves `labels`' tools from `hub` (e.g. `WithBuiltins` over the
    /// configured servers), every call through `gate`.
    pub fn new(
        hub: Arc<dyn McpHub>,
        labels: Vec<String>,
        gate: Arc<dyn McpGate>,
    ) -> GatewayMcpServer {
        GatewayMcpServer::from_shared(Arc::new(Shared {
            hub,
            labels,
            gate,
            fixed_caller: None,
        }))
    }

    /// The caller for transports without HTTP requests (stdio, tests).
    pub fn with_caller(self, caller: McpCaller) -> GatewayMcpServer {
        let shared = Shared {
            hub: self.shared.hub.clone(),
            labels: self.shared.labels.clone(),
            gate: self.shared.gate.clone(),
            fixed_caller: Some(caller),
        };
        GatewayMcpServer::from_shared(Arc::new(shared))
    }

    fn from_shared(shared: Arc<Shared>) -> GatewayMcpServer {
        GatewayMcpServer {
            shared,
            session: windlass_protocol::ids::new_id("mcps"),
            bound: OnceLock::new(),
            names: Mutex::new(HashMap::new()),
        }
    }

    /// A handler for a new session: same hub, gate and servers.
    pub fn new_session(&self) -> GatewayMcpServer {
        GatewayMcpServer::from_shared(self.shared.clone())
    }

    /// The caller of this request: from the HTTP request's extensions (the
    /// key guard's), else the fixed one; held to the session's first.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<McpCaller, ErrorData> {
        let from_http = ctx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<McpCaller>().cloned());
        let caller = from_http
            .or_else(|| self.shared.fixed_caller.clone())
            .ok_or_else(|| ErrorData::invalid_request("no authenticated caller", None))?;
        let first = self.bound.get_or_init(|| caller.clone());
        if first.key_name != caller.key_name || first.tenant != caller.tenant {
            return Err(ErrorData::invalid_request(
                "this MCP session belongs to another key",
                None,
            ));
        }
        Ok(caller)
    }

    fn names(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, String)>> {
        self.names.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every tool the caller may see, named `label__tool`. A server that
    /// cannot be listed is left out (and logged), not an error.
    async fn list_all(
        &self,
        caller: &McpCaller,
        ctx: &RequestContext<RoleServer>,
    ) -> Vec<(String, String, McpToolInfo)> {
        let labels: Vec<&String> = self
            .shared
            .labels
            .iter()
            .filter(|l| self.shared.gate.may_use_server(caller, l))
            .collect();
        let listings = join_all(labels.iter().map(|label| async move {
            let server = configured(label);
            (label, self.shared.hub.list_tools(&server, &ctx.ct).await)
        }))
        .await;
        let mut out = Vec::new();
        for (label, listed) in listings {
            match listed {
                Ok(tools) => out.extend(
                    tools
                        .into_iter()
                        .map(|t| (mcp_tool_name(label, &t.name), label.to_string(), t)),
                ),
                Err(e) => {
                    tracing::warn!(target: "windlass_mcp_endpoint", mcp_server = %label, error = %e, "left out of the MCP endpoint's tool list")
                }
            }
        }
        let mut names = self.names();
        for (name, label, tool) in &out {
            names.insert(name.clone(), (label.clone(), tool.name.clone()));
        }
        out
    }

    /// (label, tool) of a client-facing name, listing again on a miss.
    async fn resolve(
        &self,
        caller: &McpCaller,
        name: &str,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<(String, String)> {
        if let Some(found) = self.names().get(name).cloned() {
            return Some(found);
        }
        self.list_all(caller, ctx).await;
        self.names().get(name).cloned()
    }
}

fn configured(label: &str) -> McpServerRef {
    McpServerRef {
        label: label.to_owned(),
        url: None,
        headers: Vec::new(),
    }
}

fn to_mcp(name: String, tool: McpToolInfo) -> Result<Tool, ErrorData> {
    let value = serde_json::json!({
        "name": name,
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

impl ServerHandler for GatewayMcpServer {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("windlass", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Windlass: the operator's MCP servers and built-in tools, named label__tool, \
             governed per API key."
                .to_owned(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context)?;
        let tools = self
            .list_all(&caller, &context)
            .await
            .into_iter()
            .map(|(name, _, tool)| to_mcp(name, tool))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context)?;
        let name = request.name.to_string();
        let Some((label, tool)) = self.resolve(&caller, &name, &context).await else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{name}'"),
                None,
            ));
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let call_id = windlass_protocol::ids::new_id("call");
        let call = GatewayCall {
            caller: &caller,
            session: &self.session,
            call_id: &call_id,
            tool: &name,
            server_label: &label,
            mcp_tool: &tool,
            arguments: &arguments,
        };
        let arguments = match self.shared.gate.before_call(&call).await {
            GateVerdict::Allow { arguments } => arguments,
            GateVerdict::Deny { reason } => {
                self.shared
                    .gate
                    .after_call(&call, &CallOutcome::Denied)
                    .await;
                let text = format!("Error: tool '{name}' was blocked: {reason}");
                return Ok(result(ToolResult::error(text)).into());
            }
        };
        let ran = self
            .shared
            .hub
            .call_tool(&configured(&label), &tool, &arguments, &context.ct)
            .await;
        let call = GatewayCall {
            arguments: &arguments,
            ..call
        };
        match ran {
            Ok(r) => {
                let outcome = CallOutcome::Ran {
                    is_error: r.is_error,
                };
                self.shared.gate.after_call(&call, &outcome).await;
                Ok(result(r).into())
            }
            Err(e) => {
                let reason = e.to_string();
                let outcome = CallOutcome::Failed {
                    reason: reason.clone(),
                };
                self.shared.gate.after_call(&call, &outcome).await;
                Ok(result(ToolResult::error(format!("Error: {reason}"))).into())
            }
        }
    }
}

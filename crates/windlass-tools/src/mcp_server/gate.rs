//! The gate every call of the served MCP server passes: who is calling,
//! what is called, the verdict before and the outcome after. In a leaf
//! module: the handler and the policy gate both implement or use it.

/// Who is calling, per HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpCaller {
    /// The API key's name (or the JWT's key-name claim).
    pub key_name: String,
    pub tenant: String,
    pub scopes: Vec<String>,
}

/// One tool call as the gate sees it.
#[derive(Debug, Clone, Copy)]
pub struct GatewayCall<'a> {
    pub caller: &'a McpCaller,
    /// This MCP session (or, stateless, this request): what per-response
    /// budgets are counted against.
    pub session: &'a str,
    /// A fresh id for this call, for logs and traces.
    pub call_id: &'a str,
    /// The name the client called (`label__tool`).
    pub tool: &'a str,
    pub server_label: &'a str,
    /// The tool's name on its server.
    pub mcp_tool: &'a str,
    /// The arguments, a JSON object as text.
    pub arguments: &'a str,
}

/// The gate's answer before a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    /// Run it, with these arguments (the client's, or rewritten).
    Allow { arguments: String },
    /// Do not run it; the client gets an error result with `reason`.
    Deny { reason: String },
}

/// How a call ended, for the gate's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// Ran; `is_error` as the tool flagged it.
    Ran { is_error: bool },
    /// Refused by the gate.
    Denied,
    /// The server could not run it (unavailable, timeout, protocol error).
    Failed { reason: String },
}

/// Governance, metrics, logs and traces around every call of the endpoint
/// (the gateway plugs its policy chain, metrics and trace in here).
#[async_trait::async_trait]
pub trait McpGate: Send + Sync {
    /// Whether the caller sees the server `label` at all (its scopes).
    /// Default: every server.
    fn may_use_server(&self, _caller: &McpCaller, _label: &str) -> bool {
        true
    }

    /// Before each call.
    async fn before_call(&self, call: &GatewayCall<'_>) -> GateVerdict;

    /// After each call (also after a refusal).
    async fn after_call(&self, _call: &GatewayCall<'_>, _outcome: &CallOutcome) {}
}

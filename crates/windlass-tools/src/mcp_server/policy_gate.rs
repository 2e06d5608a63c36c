//! [`PolicyGate`]: the engine's [`Policy`] (the governance chain) as the
//! endpoint's gate: the caller's key name is the principal, the MCP session
//! is the "response" whose budgets calls spend, and a call that would need
//! a human approval is refused (the endpoint has no one to ask).

use std::sync::Arc;

use serde_json::{Map, Value};
use windlass_engine::{CallDecision, Policy, PolicyContext, ToolCall, ToolDefinition, ToolOrigin};

use super::gate::{CallOutcome, GateVerdict, GatewayCall, McpGate};

pub struct PolicyGate {
    policy: Arc<dyn Policy>,
    metadata: Map<String, Value>,
}

impl PolicyGate {
    pub fn new(policy: Arc<dyn Policy>) -> PolicyGate {
        PolicyGate {
            policy,
            metadata: Map::new(),
        }
    }
}

#[async_trait::async_trait]
impl McpGate for PolicyGate {
    async fn before_call(&self, call: &GatewayCall<'_>) -> GateVerdict {
        let def = ToolDefinition {
            name: call.tool.to_owned(),
            description: None,
            parameters: Value::Null,
            strict: None,
            origin: ToolOrigin::Mcp {
                server_label: call.server_label.to_owned(),
                name: call.mcp_tool.to_owned(),
            },
        };
        let ctx = PolicyContext {
            response_id: call.session,
            model: "",
            turn: 0,
            principal: Some(&call.caller.key_name),
            metadata: &self.metadata,
            approved: false,
        };
        let tool_call = ToolCall {
            call_id: call.call_id.to_owned(),
            name: call.tool.to_owned(),
            arguments: call.arguments.to_owned(),
        };
        match self.policy.before_call(&ctx, &tool_call, Some(&def)).await {
            CallDecision::Allow => GateVerdict::Allow {
                arguments: call.arguments.to_owned(),
            },
            CallDecision::AllowWithArguments(arguments) => GateVerdict::Allow { arguments },
            CallDecision::Deny { reason } => GateVerdict::Deny { reason },
            CallDecision::RequireApproval => GateVerdict::Deny {
                reason: "this call needs a human approval, which the MCP endpoint cannot ask for"
                    .into(),
            },
            // A verdict this gate does not know is not a permission.
            _ => GateVerdict::Deny {
                reason: "not allowed".into(),
            },
        }
    }

    async fn after_call(&self, call: &GatewayCall<'_>, outcome: &CallOutcome) {
        tracing::info!(
            target: "windlass_mcp_endpoint",
            key = %call.caller.key_name,
            tenant = %call.caller.tenant,
            session = call.session,
            call_id = call.call_id,
            tool = call.tool,
            outcome = ?outcome,
            "mcp endpoint call"
        );
    }
}

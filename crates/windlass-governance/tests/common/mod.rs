//! Asking the gate as the engine does.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{json, Map, Value};
use windlass_engine::{CallDecision, Policy, PolicyContext, ToolCall, ToolDefinition, ToolOrigin};
use windlass_governance::{Governance, GovernanceConfig};

pub(crate) fn gov(toml_text: &str) -> Governance {
    let config: GovernanceConfig = toml::from_str(toml_text).unwrap();
    Governance::new(config)
        .unwrap()
        .with_workspace(Some("/work".into()), vec!["/work".into()])
}

pub(crate) fn builtin(tool: &str) -> ToolDefinition {
    mcp("windlass", tool)
}

pub(crate) fn mcp(label: &str, tool: &str) -> ToolDefinition {
    ToolDefinition {
        name: format!("{label}__{tool}"),
        description: None,
        parameters: json!({}),
        strict: None,
        origin: ToolOrigin::Mcp {
            server_label: label.to_owned(),
            name: tool.to_owned(),
        },
    }
}

pub(crate) struct Ask<'a> {
    pub principal: Option<&'a str>,
    pub metadata: Map<String, Value>,
    pub approved: bool,
    pub response: &'a str,
}

impl Default for Ask<'_> {
    fn default() -> Self {
        Ask {
            principal: None,
            metadata: Map::new(),
            approved: false,
            response: "resp_1",
        }
    }
}

pub(crate) async fn ask(
    g: &Governance,
    def: &ToolDefinition,
    args: Value,
    a: &Ask<'_>,
) -> CallDecision {
    static N: AtomicU32 = AtomicU32::new(0);
    let ctx = PolicyContext {
        response_id: a.response,
        model: "m",
        turn: 1,
        principal: a.principal,
        metadata: &a.metadata,
        approved: a.approved,
    };
    let call = ToolCall {
        call_id: format!("call_{}", N.fetch_add(1, Ordering::Relaxed)),
        name: def.name.clone(),
        arguments: args.to_string(),
    };
    g.before_call(&ctx, &call, Some(def)).await
}

pub(crate) fn denied(d: &CallDecision) -> String {
    match d {
        CallDecision::Deny { reason } => reason.clone(),
        other => panic!("expected a denial, got {other:?}"),
    }
}

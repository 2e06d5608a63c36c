//! Called by the loop around each turn and tool call; a port so governance and SDK hooks decide.
//!
//! The one gate around every tool call and every turn.
//!
//! SDK hooks and governance (allowlists, rate limits, autonomy budgets) are all `Policy` implementations; the engine consults
//! the configured policy before each turn, before each call and after it.

use std::time::Duration;

use super::tools::{ToolCall, ToolDefinition, ToolResult};

/// What the loop has spent so far in this response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBudget {
    /// Model turns already made.
    pub turns: u32,
    /// Server-executed tool calls so far.
    pub tool_calls: u64,
    /// Time since the response started.
    pub elapsed: Duration,
}

/// Which response and turn a policy is asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyContext<'a> {
    /// The response's id.
    pub response_id: &'a str,
    /// The model the request named.
    pub model: &'a str,
    /// The current turn (from 0).
    pub turn: u32,
    /// Who asked: the API key's name on the server, the SDK's caller; `None`
    /// when the surface does not authenticate.
    pub principal: Option<&'a str>,
    /// The request's `metadata` (governance reads budget overrides there).
    pub metadata: &'a serde_json::Map<String, serde_json::Value>,
    /// The client already approved this call (`mcp_approval_response`):
    /// asking again would loop, so a policy answers Allow or Deny.
    pub approved: bool,
}

/// The verdict before a call runs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallDecision {
    /// Run it as the model asked.
    Allow,
    /// Run it with these arguments instead of the model's.
    AllowWithArguments(String),
    /// Do not run it; the reason is fed back as the call's error output.
    Deny {
        /// Why, fed back to the model.
        reason: String,
    },
    /// Pause the response for a human decision (an approval request).
    RequireApproval,
}

/// A call decision and the rule that made it, for traces and decision logs.
#[derive(Debug, Clone, PartialEq)]
pub struct RuledDecision {
    /// What to do with the call.
    pub decision: CallDecision,
    /// The policy's name for the rule that decided (e.g. `scope:files`).
    pub rule: Option<String>,
}

impl From<CallDecision> for RuledDecision {
    fn from(decision: CallDecision) -> Self {
        RuledDecision {
            decision,
            rule: None,
        }
    }
}

/// The verdict before a model turn.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnDecision {
    /// Go on with the next turn.
    Continue,
    /// End the response as `incomplete` with this reason.
    Stop {
        /// Why, the response's `incomplete_details`.
        reason: String,
    },
}

/// Governance around the loop: asked before each tool call and each turn (allow, deny, rewrite, stop).
#[async_trait::async_trait]
pub trait Policy: Send + Sync {
    /// Asked before each model turn: go on, or end the response
    /// `incomplete` (the default goes on).
    async fn before_turn(&self, _ctx: &PolicyContext<'_>, _budget: &LoopBudget) -> TurnDecision {
        TurnDecision::Continue
    }

    /// Asked before each tool call: allow, deny or rewrite it (the default
    /// allows everything).
    async fn before_call(
        &self,
        _ctx: &PolicyContext<'_>,
        _call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        CallDecision::Allow
    }

    /// What the engine asks before each call, once per call: the decision
    /// and, when the policy names it, the rule that made it. The default
    /// asks [`before_call`](Self::before_call) and names no rule; implement
    /// this one instead to report rules.
    async fn decide_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        tool: Option<&ToolDefinition>,
    ) -> RuledDecision {
        self.before_call(ctx, call, tool).await.into()
    }

    /// Observes a result and may replace it.
    async fn after_call(
        &self,
        _ctx: &PolicyContext<'_>,
        _call: &ToolCall,
        result: ToolResult,
    ) -> ToolResult {
        result
    }
}

/// The default: everything allowed.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl Policy for AllowAll {}

/// Several policies in order: the first non-default decision wins.
pub struct PolicyChain(pub Vec<std::sync::Arc<dyn Policy>>);

#[async_trait::async_trait]
impl Policy for PolicyChain {
    async fn before_turn(&self, ctx: &PolicyContext<'_>, budget: &LoopBudget) -> TurnDecision {
        for p in &self.0 {
            if let d @ TurnDecision::Stop { .. } = p.before_turn(ctx, budget).await {
                return d;
            }
        }
        TurnDecision::Continue
    }

    async fn before_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        self.decide_call(ctx, call, tool).await.decision
    }

    async fn decide_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        tool: Option<&ToolDefinition>,
    ) -> RuledDecision {
        for p in &self.0 {
            let ruled = p.decide_call(ctx, call, tool).await;
            if ruled.decision != CallDecision::Allow {
                return ruled;
            }
        }
        CallDecision::Allow.into()
    }

    async fn after_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        mut result: ToolResult,
    ) -> ToolResult {
        for p in &self.0 {
            result = p.after_call(ctx, call, result).await;
        }
        result
    }
}

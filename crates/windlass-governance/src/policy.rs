//! [`Governance`]: the engine's `Policy` that checks every call against the
//! operator's rules, in this order: scopes, autonomy level, the call's own
//! arguments (shell line, paths, domains), the policy webhook, approval
//! (supervised), rate limits, budgets. The first rule that refuses decides;
//! every decision is logged as one structured line.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use windlass_engine::{
    CallDecision, CounterVerdict, GovernanceCounters, Policy, PolicyContext, RuledDecision,
    ToolCall, ToolDefinition, ToolResult,
};

use crate::budget::{self, effective, Category};
use crate::classify::{classify, in_scope, Builtin, Effect, Target, ToolHints};
use crate::config::{Autonomy, GovernanceConfig, GovernanceConfigError, Rules};
use crate::counters::InProcessCounters;
use crate::paths::{domain_allowed, Areas};
use crate::rate;
use crate::shell;
use crate::webhook::{Webhook, WebhookAnswer, WebhookCall};

/// The governance gate. Compose it with other policies through
/// `windlass_engine::PolicyChain` (it goes first).
pub struct Governance {
    config: GovernanceConfig,
    hints: Option<Arc<dyn ToolHints>>,
    /// The built-ins' work directory (relative paths start there) and roots.
    work_dir: Option<PathBuf>,
    roots: Vec<PathBuf>,
    /// Rate limits and budgets: this process's, or shared by replicas.
    counters: Arc<dyn GovernanceCounters>,
    webhook: Option<Webhook>,
}

/// A refusal: the rule that fired and why.
struct Refusal {
    rule: &'static str,
    reason: String,
}

fn refuse(rule: &'static str, reason: impl Into<String>) -> Refusal {
    Refusal {
        rule,
        reason: reason.into(),
    }
}

impl Governance {
    /// The gate with rate limits and budgets counted in this process.
    pub fn new(config: GovernanceConfig) -> Result<Governance, GovernanceConfigError> {
        Governance::with_counters(config, Arc::new(InProcessCounters::new()))
    }

    /// The gate counting rate limits and budgets in `counters` (e.g. the
    /// Postgres counters every replica shares, so a limit holds once across
    /// them).
    pub fn with_counters(
        mut config: GovernanceConfig,
        counters: Arc<dyn GovernanceCounters>,
    ) -> Result<Governance, GovernanceConfigError> {
        config.validate()?;
        // Paths are compared with the built-ins' canonical roots, so an
        // allowlisted directory reached through a symlink is resolved once.
        let tables = std::iter::once(&mut config.defaults).chain(config.keys.values_mut());
        for rules in tables {
            for p in rules.paths.iter_mut().flatten() {
                if let Ok(real) = std::fs::canonicalize(&*p) {
                    *p = real.to_string_lossy().into_owned();
                }
            }
        }
        let webhook = match config.webhook.clone() {
            Some(w) => Some(Webhook::new(w).map_err(GovernanceConfigError::WebhookClient)?),
            None => None,
        };
        Ok(Governance {
            config,
            hints: None,
            work_dir: None,
            roots: Vec::new(),
            counters,
            webhook,
        })
    }

    /// Where MCP tools' read-only hints come from.
    pub fn with_hints(mut self, hints: Arc<dyn ToolHints>) -> Governance {
        self.hints = Some(hints);
        self
    }

    /// The built-in tools' work directory and roots: relative paths are
    /// taken from `work_dir`, and without a `paths` rule, file tools and
    /// redirections stay inside `roots`.
    pub fn with_workspace(mut self, work_dir: Option<PathBuf>, roots: Vec<PathBuf>) -> Governance {
        self.work_dir = work_dir;
        self.roots = roots;
        self
    }

    fn areas(&self, rules: &Rules) -> Areas {
        let roots: Vec<PathBuf> = match &rules.paths {
            Some(paths) => paths.iter().map(PathBuf::from).collect(),
            None => self.roots.clone(),
        };
        Areas::new(self.work_dir.clone(), roots)
    }

    /// The rules a call must pass before the webhook is asked.
    fn check_static(&self, rules: &Rules, target: &Target, args: &Value) -> Result<(), Refusal> {
        if let Some(scopes) = &rules.tools {
            if !in_scope(scopes, target) {
                return Err(refuse("scope", "this API key may not use this tool"));
            }
        }
        let autonomy = rules.autonomy.unwrap_or_default();
        if autonomy == Autonomy::ReadOnly && matches!(target.effect, Effect::Write | Effect::Exec) {
            return Err(refuse(
                "autonomy.read_only",
                "this API key is read-only: only tools that read may run",
            ));
        }
        self.check_arguments(rules, target, args)
    }

    /// Built-in tools' arguments: the shell line, paths, domains.
    fn check_arguments(&self, rules: &Rules, target: &Target, args: &Value) -> Result<(), Refusal> {
        let Some(builtin) = target.builtin else {
            return Ok(());
        };
        let text = |field: &str| args.get(field).and_then(Value::as_str);
        match builtin {
            Builtin::Shell => {
                let line = text("command").unwrap_or_default();
                shell::validate(line, rules.commands.as_deref(), &self.areas(rules))
                    .map(|_| ())
                    .map_err(|e| refuse("shell", e.to_string()))
            }
            Builtin::ReadFile | Builtin::WriteFile | Builtin::EditFile | Builtin::ListDir => {
                let path = text("path").unwrap_or(".");
                if self.areas(rules).allows(path) {
                    Ok(())
                } else {
                    Err(refuse(
                        "paths",
                        format!("path '{path}' is outside the allowed paths"),
                    ))
                }
            }
            Builtin::WebFetch => {
                let Some(domains) = &rules.domains else {
                    return Ok(());
                };
                let url = text("url").unwrap_or_default();
                let host = url::Url::parse(url)
                    .ok()
                    .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned()));
                match host {
                    Some(h) if domain_allowed(domains, &h) => Ok(()),
                    Some(h) => Err(refuse(
                        "domains",
                        format!("host '{h}' is not on the domain allowlist"),
                    )),
                    None => Err(refuse(
                        "domains",
                        format!("'{url}' is not a URL with a host"),
                    )),
                }
            }
        }
    }

    /// What a call spends from the response's budgets.
    fn amounts(target: &Target, args: &Value) -> Vec<(Category, u64)> {
        let lines = |field: &str| {
            args.get(field)
                .and_then(Value::as_str)
                .map(|s| s.lines().count().max(1) as u64)
                .unwrap_or(0)
        };
        match target.builtin {
            Some(Builtin::ReadFile) => vec![(Category::FilesRead, 1)],
            Some(Builtin::WriteFile) => vec![
                (Category::FilesWritten, 1),
                (Category::LinesChanged, lines("content")),
            ],
            Some(Builtin::EditFile) => vec![
                (Category::FilesWritten, 1),
                (
                    Category::LinesChanged,
                    lines("old_string").max(lines("new_string")),
                ),
            ],
            Some(Builtin::Shell) => vec![(Category::CommandsRun, 1)],
            Some(Builtin::WebFetch) => vec![(Category::NetworkRequests, 1)],
            Some(Builtin::ListDir) | None => Vec::new(),
        }
    }

    /// Takes the call's rate-limit units and budget amounts in one counter
    /// call, all or nothing: a call refused by one spends none of the
    /// others. The per-tool limit is named first, then the key's, then the
    /// budgets. Counters that cannot be reached refuse the call.
    async fn count(
        &self,
        ctx: &PolicyContext<'_>,
        rules: &Rules,
        tool: &str,
        limits: &[Option<u64>; 5],
        amounts: &[(Category, u64)],
    ) -> Result<(), Refusal> {
        let rates = rate::takes(ctx.principal, rules, tool);
        let budgets = budget::takes(ctx.response_id, limits, amounts);
        let takes: Vec<_> = rates
            .iter()
            .map(|r| r.take.clone())
            .chain(budgets.iter().map(|b| b.take.clone()))
            .collect();
        if takes.is_empty() {
            return Ok(());
        }
        match self.counters.take(&takes).await {
            Ok(CounterVerdict::Allowed) => Ok(()),
            Ok(CounterVerdict::Refused { index, remaining }) => Err(match rates.get(index) {
                Some(r) => refuse(r.limited.rule, r.limited.message.clone()),
                None => match budgets.get(index - rates.len()) {
                    Some(b) => refuse("budget", b.message(remaining)),
                    None => refuse("counters", "refused by the governance counters"),
                },
            }),
            Err(e) => {
                tracing::warn!(target: "windlass_governance", error = %e, "governance counters unavailable");
                Err(refuse(
                    "counters",
                    "the governance counters are unavailable; try again later",
                ))
            }
        }
    }

    async fn decide(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        target: &Target,
    ) -> Result<(CallDecision, &'static str), Refusal> {
        let rules = self.config.rules_for(ctx.principal);
        let mut args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        if target.builtin.is_some() && !args.is_object() {
            return Err(refuse("arguments", "the arguments are not a JSON object"));
        }
        self.check_static(&rules, target, &args)?;

        let mut rewritten = None;
        let mut approval_rule = None;
        if let Some(hook) = &self.webhook {
            let (label, tool) = target
                .mcp
                .as_ref()
                .map(|(l, t)| (Some(l.as_str()), Some(t.as_str())))
                .unwrap_or((None, None));
            let question = WebhookCall {
                response_id: ctx.response_id,
                model: ctx.model,
                principal: ctx.principal,
                turn: ctx.turn,
                call_id: &call.call_id,
                tool: &call.name,
                server_label: label,
                mcp_tool: tool,
                effect: target.effect.as_str(),
                arguments: if args.is_null() {
                    Value::String(call.arguments.clone())
                } else {
                    args.clone()
                },
            };
            match hook.ask(&question).await {
                (WebhookAnswer::Allow, _) => {}
                (WebhookAnswer::Deny { reason }, failed) => {
                    let rule = if failed.is_some() {
                        "webhook.on_error"
                    } else {
                        "webhook"
                    };
                    return Err(refuse(
                        rule,
                        reason.unwrap_or_else(|| "denied by the policy service".to_owned()),
                    ));
                }
                (WebhookAnswer::Rewrite { arguments }, _) => {
                    // The new arguments pass the same rules as the model's.
                    self.check_arguments(&rules, target, &arguments)?;
                    rewritten = Some(arguments.to_string());
                    args = arguments;
                }
                (WebhookAnswer::RequireApproval, _) => approval_rule = Some("webhook"),
            }
        }
        let supervised = rules.autonomy == Some(Autonomy::Supervised)
            && matches!(target.effect, Effect::Write | Effect::Exec);
        if supervised && approval_rule.is_none() {
            approval_rule = Some("autonomy.supervised");
        }
        if let Some(rule) = approval_rule {
            // Nothing is spent until the approved call comes back to run.
            if !ctx.approved {
                return Ok((CallDecision::RequireApproval, rule));
            }
        }

        let limits = effective(&rules.budgets, ctx.metadata).map_err(|e| refuse("budget", e))?;
        self.count(
            ctx,
            &rules,
            &call.name,
            &limits,
            &Self::amounts(target, &args),
        )
        .await?;
        Ok(match rewritten {
            Some(a) => (CallDecision::AllowWithArguments(a), "webhook.rewrite"),
            None => (
                CallDecision::Allow,
                if ctx.approved { "approved" } else { "allow" },
            ),
        })
    }
}

#[async_trait::async_trait]
impl Policy for Governance {
    async fn before_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        self.decide_call(ctx, call, tool).await.decision
    }

    /// The decision and the rule that fired (shown in the response's trace).
    async fn decide_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        tool: Option<&ToolDefinition>,
    ) -> RuledDecision {
        let target = classify(&call.name, tool, self.hints.as_deref());
        let (decision, rule, reason) = match self.decide(ctx, call, &target).await {
            Ok((d, rule)) => (d, rule, None),
            Err(r) => (
                // The rule is named in the reason, so the model, the
                // response's trace and the client all see which one fired.
                CallDecision::Deny {
                    reason: format!("{} (governance rule: {})", r.reason, r.rule),
                },
                r.rule,
                Some(r.reason),
            ),
        };
        let verdict = match &decision {
            CallDecision::Allow => "allow",
            CallDecision::AllowWithArguments(_) => "allow_rewritten",
            CallDecision::Deny { .. } => "deny",
            CallDecision::RequireApproval => "approval",
            _ => "other",
        };
        tracing::debug!(
            target: "windlass_governance",
            response_id = ctx.response_id,
            principal = ctx.principal.unwrap_or("-"),
            tool = %call.name,
            call_id = %call.call_id,
            effect = target.effect.as_str(),
            rule,
            decision = verdict,
            reason = reason.as_deref().unwrap_or(""),
            "governance decision"
        );
        RuledDecision {
            decision,
            rule: Some(rule.to_owned()),
        }
    }

    /// The audit line after a call (seed 004 `log_execution`).
    async fn after_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        result: ToolResult,
    ) -> ToolResult {
        tracing::debug!(
            target: "windlass_governance",
            response_id = ctx.response_id,
            principal = ctx.principal.unwrap_or("-"),
            tool = %call.name,
            call_id = %call.call_id,
            outcome = if result.is_error { "error" } else { "ok" },
            "governance outcome"
        );
        result
    }
}

//! Who handles each call, decided once per call before anything runs, and
//! reported as a run event.
//!
//! A model turn's calls are decided when the turn ends, except the server
//! calls of a turn that pauses for the client: those are `Deferred` and the
//! continuation decides them (hosted calls excepted: they run before the
//! pause, so their items end `completed`). A call that needs a human approval (its server
//! requires it, or the policy asked for it) is put to the policy once more
//! when the approved call is about to run, with `approved` set: the policy
//! may still deny it, and a gate spends its rate limits and budgets on that
//! pass. A denied request is refused, and the client's own unanswered calls
//! go to the model as they are.

use std::collections::HashSet;

use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::mcp::calls::{reissue_as_approval, to_approval_request};
use crate::ports::agent::events::{CallReport, CallVerdict, Rejection, RunEvent};
use crate::ports::agent::policy::{CallDecision, RuledDecision};
use crate::ports::agent::tools::ToolCall;
use crate::ports::agent::tools::ToolOwner;
use crate::prepared::PreparedRun;
use crate::state::{Disposition, PendingCall, Runner};

/// Where a batch of calls comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A model turn (by index).
    Turn(u32),
    /// The parent response's calls a continuation settles.
    Continuation,
}

/// A decision before it is reported.
struct Decided {
    disposition: Disposition,
    verdict: CallVerdict,
    rule: Option<String>,
}

impl Decided {
    fn plain(disposition: Disposition, verdict: CallVerdict) -> Decided {
        Decided {
            disposition,
            verdict,
            rule: None,
        }
    }

    fn reject(why: Rejection, message: String) -> Decided {
        Decided::plain(
            Disposition::Reject(message.clone()),
            CallVerdict::Rejected { why, message },
        )
    }

    fn deferred() -> Decided {
        Decided::plain(Disposition::Deferred, CallVerdict::Deferred)
    }
}

/// A batch's decisions.
pub(crate) struct Classified {
    pub pending: Vec<PendingCall>,
    /// A call was refused as a stall (`stall_stop`): the next turn is asked
    /// for the answer.
    pub stalled: bool,
}

/// Decides every call of a batch. `approvals`: calls of a model turn that
/// became `mcp_approval_request` items.
pub(crate) async fn classify(
    inner: &EngineInner,
    run: &PreparedRun,
    out: &mut Emitter<'_>,
    calls: Vec<ToolCall>,
    source: Source,
    approvals: &HashSet<String>,
) -> Classified {
    let mut decided: Vec<Option<Decided>> = Vec::with_capacity(calls.len());
    // First what needs no policy, then the calls that can pause the turn
    // (client calls, approval requests): a pausing turn defers the rest.
    for (i, call) in calls.iter().enumerate() {
        let owner = run.tools.owner(&call.name);
        let d = match static_decision(run, call, owner, source, i) {
            Some(d) => Some(d),
            None if runs_here(owner, source) && !approvals.contains(&call.call_id) => {
                technique_decision(run, out, call)
            }
            // A server that requires approval: the human decides first, and
            // the policy is asked once, when the approved call is about to
            // run, so a gate's rate limits and budgets count it once.
            None if approvals.contains(&call.call_id) => Some(Decided::plain(
                Disposition::Approval,
                CallVerdict::NeedsApproval,
            )),
            None if owner == Some(&ToolOwner::Client) => {
                Some(decide(inner, run, out, call, owner, approvals, source).await)
            }
            None => None,
        };
        decided.push(d);
    }
    let pauses = matches!(source, Source::Turn(_))
        && decided
            .iter()
            .flatten()
            .any(|d| matches!(d.disposition, Disposition::Client | Disposition::Approval));
    let mut pending = Vec::with_capacity(calls.len());
    let mut stalled = false;
    for (call, slot) in calls.into_iter().zip(decided) {
        let owner = run.tools.owner(&call.name).cloned();
        let d = match slot {
            Some(d) => d,
            // Hosted calls run before the pause: the client sees their items.
            None if pauses && !run.tools.is_hosted(&call.name) => Decided::deferred(),
            None => decide(inner, run, out, &call, owner.as_ref(), approvals, source).await,
        };
        stalled |= matches!(
            d.verdict,
            CallVerdict::Rejected {
                why: Rejection::Stalled,
                ..
            }
        );
        out.observe(RunEvent::CallDecided(CallReport {
            turn: match source {
                Source::Turn(t) => Some(t),
                Source::Continuation => None,
            },
            call: call.clone(),
            owner,
            verdict: d.verdict,
            rule: d.rule,
        }))
        .await;
        pending.push(PendingCall {
            call,
            disposition: d.disposition,
        });
    }
    Classified { pending, stalled }
}

/// Decisions that need no policy: refusals whatever the policy says, and
/// what a continuation already knows.
fn static_decision(
    run: &PreparedRun,
    call: &ToolCall,
    owner: Option<&ToolOwner>,
    source: Source,
    position: usize,
) -> Option<Decided> {
    if let Some(reason) = run.mcp.denied.get(&call.call_id) {
        return Some(Decided::reject(
            Rejection::UserDenied,
            format!("Error: {reason}"),
        ));
    }
    let Some(owner) = owner else {
        return Some(Decided::reject(
            Rejection::UnknownTool,
            format!(
                "Error: tool '{}' is not available in this request.",
                call.name
            ),
        ));
    };
    if !run.tools.is_allowed(&call.name) {
        return Some(Decided::reject(
            Rejection::NotAllowed,
            format!(
                "Error: tool '{}' is not allowed for this request (allowed_tools).",
                call.name
            ),
        ));
    }
    if let (Source::Turn(_), Some(limit)) = (source, run.limits.per_turn) {
        if position >= limit as usize {
            return Some(Decided::reject(
                Rejection::PerTurnLimit,
                format!(
                    "Error: tool '{}' was not run: at most {limit} tool calls per turn.",
                    call.name
                ),
            ));
        }
    }
    if source == Source::Continuation && *owner == ToolOwner::Client {
        // The client's to answer; its turn already decided it.
        return Some(Decided::plain(
            Disposition::Client,
            CallVerdict::Client {
                arguments: call.arguments.clone(),
            },
        ));
    }
    None
}

/// A server tool's call of a model turn (the loop's techniques look at it).
fn runs_here(owner: Option<&ToolOwner>, source: Source) -> bool {
    matches!(source, Source::Turn(_))
        && matches!(
            owner,
            Some(ToolOwner::Builtin { .. } | ToolOwner::Local { .. } | ToolOwner::Mcp { .. })
        )
}

/// Malformed arguments, and what the response's techniques refuse before
/// the policy is asked (`crate::check::before_run`).
fn technique_decision(run: &PreparedRun, out: &Emitter<'_>, call: &ToolCall) -> Option<Decided> {
    let schema = run
        .tools
        .get(&call.name)
        .map(|d| &d.parameters)
        .unwrap_or(&serde_json::Value::Null);
    let techniques = &run.limits.techniques;
    let request = match techniques.stall_stop {
        true => crate::check::request_text(&run.input).unwrap_or_default(),
        false => String::new(),
    };
    crate::check::before_run(techniques, call, schema, &out.response.output, &request)
        .map(|(why, message)| Decided::reject(why, message))
}

/// The policy's word on one call, and who runs it.
async fn decide(
    inner: &EngineInner,
    run: &PreparedRun,
    out: &mut Emitter<'_>,
    call: &ToolCall,
    owner: Option<&ToolOwner>,
    approvals: &HashSet<String>,
    source: Source,
) -> Decided {
    let turn = match source {
        Source::Turn(t) => t + 1,
        Source::Continuation => 0,
    };
    // A call the client approved is not sent back for approval.
    let approved = run.mcp.approvals.contains_key(&call.call_id)
        && !run.mcp.denied.contains_key(&call.call_id);
    let ctx = run.policy_context(turn, approved);
    let def = run.tools.get(&call.name);
    let RuledDecision { decision, rule } = inner.policy.decide_call(&ctx, call, def).await;
    let mut d = match decision {
        CallDecision::Deny { reason } => Decided::reject(
            Rejection::PolicyDenied,
            format!("Error: tool '{}' was blocked: {reason}", call.name),
        ),
        CallDecision::RequireApproval if !approved => {
            approval(run, out, call, owner, approvals).await
        }
        _ if approvals.contains(&call.call_id) => {
            Decided::plain(Disposition::Approval, CallVerdict::NeedsApproval)
        }
        CallDecision::AllowWithArguments(arguments) => allowed(owner, arguments),
        CallDecision::Allow | CallDecision::RequireApproval => {
            allowed(owner, call.arguments.clone())
        }
    };
    d.rule = rule;
    d
}

fn allowed(owner: Option<&ToolOwner>, arguments: String) -> Decided {
    let runner = match owner {
        Some(ToolOwner::Builtin { executor } | ToolOwner::Local { executor }) => {
            Runner::Executor(*executor)
        }
        Some(ToolOwner::Mcp { .. }) => Runner::Mcp,
        _ => {
            return Decided::plain(Disposition::Client, CallVerdict::Client { arguments });
        }
    };
    Decided::plain(
        Disposition::Execute {
            runner,
            arguments: arguments.clone(),
        },
        CallVerdict::Run { arguments },
    )
}

/// The policy wants a human to approve the call: an MCP call becomes an
/// `mcp_approval_request` (as for a server declared with
/// `require_approval`); the client decides its own calls; other tools
/// cannot be approved and are refused.
async fn approval(
    run: &PreparedRun,
    out: &mut Emitter<'_>,
    call: &ToolCall,
    owner: Option<&ToolOwner>,
    approvals: &HashSet<String>,
) -> Decided {
    let needs_approval = Decided::plain(Disposition::Approval, CallVerdict::NeedsApproval);
    match owner {
        _ if approvals.contains(&call.call_id) => needs_approval,
        Some(ToolOwner::Mcp { .. }) if to_approval_request(out, &call.call_id).await => {
            needs_approval
        }
        // A parent's paused call (its item is in the history).
        Some(ToolOwner::Mcp { .. }) if run.mcp.targets.contains_key(&call.call_id) => {
            if let Some((label, tool)) = run.mcp.targets.get(&call.call_id) {
                reissue_as_approval(out, call, label, tool).await;
            }
            needs_approval
        }
        Some(ToolOwner::Client) => allowed(owner, call.arguments.clone()),
        _ => Decided::reject(
            Rejection::ApprovalUnavailable,
            format!(
                "Error: tool '{}' needs an approval, which this tool cannot get here.",
                call.name
            ),
        ),
    }
}

//! `Engine::run`: the one agent loop every surface drives.

use std::collections::HashSet;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::{info, warn, Instrument};
use windlass_protocol::{EventData, Item, McpCallStatus, ResponseStatus, Usage};

use crate::config::ClientToolsStatus;
use crate::emitter::Emitter;
use crate::engine::Engine;
use crate::error::RunFailure;
use crate::execute::{child, execute_calls};
use crate::finish::{finalize, Ending};
use crate::ports::policy::{CallDecision, LoopBudget, TurnDecision};
use crate::ports::provider::ProviderError;
use crate::ports::sink::EventSink;
use crate::ports::tools::{ToolCall, ToolContext};
use crate::prepare::PreparedRun;
use crate::state::{
    decide_next_action, Disposition, Finish, Interrupt, LoopState, NextAction, PendingCall, Phase,
    Runner,
};
use crate::tooling::CallOwner;
use crate::turn::{run_turn, TurnError};

/// The result of a run: the final response, and why it failed if it did.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub response: windlass_protocol::ResponseResource,
    pub failure: Option<RunFailure>,
}

impl Engine {
    /// Runs the loop to its end, streaming events to `sink`. Persists the
    /// response (unless `store: false`) before the single terminal event.
    /// `cancel` stops the upstream call and running tools; the response then
    /// ends `cancelled`.
    pub async fn run(
        &self,
        run: PreparedRun,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> RunOutcome {
        let span =
            tracing::info_span!("response", id = %run.response.id, model = %run.response.model);
        self.drive(run, sink, cancel).instrument(span).await
    }

    async fn drive(
        &self,
        run: PreparedRun,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> RunOutcome {
        let inner = &*self.inner;
        let started = Instant::now();
        let upstream_stream = run.stream();
        // The wall-clock budget stops whatever is running (model call or tools)
        // through a child token, and ends the response `incomplete`.
        let outer = cancel;
        let cancel = outer.child_token();
        let deadline = inner.config.max_response_time.map(|limit| {
            let token = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                token.cancel();
            })
        });
        let mut out = Emitter::new(run.response.clone(), sink, outer.clone());
        out.emit_snapshot(|response| EventData::Created { response })
            .await;
        out.emit_snapshot(|response| EventData::InProgress { response })
            .await;

        let mut state = LoopState::new(
            inner.config.max_agentic_turns,
            run.call_budget,
            run.single_shot,
        );
        if !run.single_shot {
            let calls = run.pending.clone().into_iter();
            state.pending = self.classify(&run, calls, &HashSet::new(), 0, false).await;
        }
        let mut usage: Option<Usage> = None;
        let mut run = run;
        let mut paused = false;

        let listed =
            crate::mcp::listing::list_new_servers(inner, &mut run, &mut out, &cancel).await;
        let ending = if let Err(ending) = listed {
            ending
        } else {
            loop {
                if cancel.is_cancelled() {
                    break Ending::Cancelled;
                }
                match decide_next_action(&state) {
                    NextAction::CallModel => {
                        if let Some(stop) = self.turn_gate(&run, &state, started).await {
                            state.stop = Some(stop);
                            continue;
                        }
                        let turn = state.turns;
                        let request = crate::upstream::model_request(
                            &run,
                            &out.response.output,
                            turn,
                            upstream_stream,
                        );
                        let turn_span = tracing::info_span!("model_turn", turn);
                        let turn_started = Instant::now();
                        let stream = tokio::select! {
                            biased;
                            _ = cancel.cancelled() => break Ending::Cancelled,
                            s = inner.provider.start(request).instrument(turn_span.clone()) => s,
                        };
                        let stream = match stream {
                            Ok(s) => s,
                            Err(e) => break provider_failure(&e),
                        };
                        let (result, _) = run_turn(&mut out, stream, &run.tools, &cancel)
                            .instrument(turn_span.clone())
                            .await;
                        state.turns += 1;
                        let outcome = match result {
                            Ok(o) => o,
                            Err(TurnError::Cancelled) => break Ending::Cancelled,
                            Err(TurnError::Provider(e)) => break provider_failure(&e),
                        };
                        turn_span.in_scope(|| {
                            info!(
                                duration_ms = turn_started.elapsed().as_secs_f64() * 1000.0,
                                tool_calls = outcome.calls.len(),
                                "model turn done"
                            )
                        });
                        if let Some(u) = outcome.usage {
                            usage.get_or_insert_with(Usage::default).add(&u);
                        }
                        state.last_finish = outcome.finish;
                        state.pending = if run.single_shot {
                            outcome
                                .calls
                                .into_iter()
                                .map(|call| PendingCall {
                                    call,
                                    disposition: Disposition::Client,
                                })
                                .collect()
                        } else {
                            self.classify(
                                &run,
                                outcome.calls.into_iter(),
                                &outcome.approvals,
                                state.turns,
                                true,
                            )
                            .await
                        };
                        state.phase = Phase::AfterModel;
                    }
                    NextAction::ExecuteTools(plan) => {
                        let planned: Vec<String> =
                            plan.iter().map(|p| p.call.call_id.clone()).collect();
                        let ctx = ToolContext {
                            response_id: run.response.id.clone(),
                            cancel: child(&cancel),
                            turn: state.turns,
                        };
                        match execute_calls(inner, &run, &mut out, plan, &ctx).await {
                            Some(n) => state.executed_calls += n,
                            None => break Ending::Cancelled,
                        }
                        // What is left is either over the tool-call budget (server
                        // calls) or a continuation's unanswered client calls, which
                        // go to the model as they are (seed 000 edge case).
                        state.pending.retain(|p| {
                            !planned.contains(&p.call.call_id)
                                && matches!(p.disposition, Disposition::Execute { .. })
                        });
                        state.phase = Phase::AfterTools;
                    }
                    NextAction::Interrupt(Interrupt::ClientCalls | Interrupt::Approval) => {
                        paused = true;
                        break match inner.config.client_tools_status {
                            ClientToolsStatus::RequiresAction => Ending::Done(Finish {
                                status: ResponseStatus::RequiresAction,
                                incomplete_reason: None,
                            }),
                            ClientToolsStatus::Completed => Ending::Done(Finish::completed()),
                        };
                    }
                    NextAction::Finish(f) => break Ending::Done(f),
                }
            }
        };
        close_open_items(&mut out, paused).await;
        if let Some(timer) = deadline {
            timer.abort();
        }
        let ending = match ending {
            Ending::Cancelled if !outer.is_cancelled() && cancel.is_cancelled() => {
                Ending::Done(Finish::incomplete("max_response_time"))
            }
            other => other,
        };
        if let Ending::Failed(f) = &ending {
            warn!(code = %f.code, message = %f.message, "response failed");
        }
        finalize(inner, &run, out, ending, usage).await
    }

    /// The policy's and the wall clock's say before a model turn.
    async fn turn_gate(
        &self,
        run: &PreparedRun,
        state: &LoopState,
        started: Instant,
    ) -> Option<Finish> {
        let inner = &*self.inner;
        if let Some(limit) = inner.config.max_response_time {
            if started.elapsed() >= limit {
                return Some(Finish::incomplete("max_response_time"));
            }
        }
        let ctx = run.policy_context(state.turns, false);
        let budget = LoopBudget {
            turns: state.turns,
            tool_calls: state.executed_calls,
            elapsed: started.elapsed(),
        };
        match inner.policy.before_turn(&ctx, &budget).await {
            TurnDecision::Continue => None,
            TurnDecision::Stop { reason } => Some(Finish::incomplete(&reason)),
        }
    }

    /// Decides, before anything runs, who handles each call of a turn.
    /// `from_model`: the calls of a model turn (not a continuation's).
    async fn classify(
        &self,
        run: &PreparedRun,
        calls: impl Iterator<Item = ToolCall>,
        approvals: &HashSet<String>,
        turn: u32,
        from_model: bool,
    ) -> Vec<PendingCall> {
        let inner = &*self.inner;
        let calls: Vec<ToolCall> = calls.collect();
        let owners: Vec<CallOwner> = calls
            .iter()
            .map(|c| run.tools.owner(&c.name, &inner.executors))
            .collect();
        let mut decided: Vec<Option<Disposition>> = vec![None; calls.len()];
        // First the calls that can pause the turn: client calls and approval requests.
        for (i, call) in calls.iter().enumerate() {
            decided[i] = match static_rejection(run, call, &owners[i]) {
                Some(reject) => Some(reject),
                None if owners[i] == CallOwner::Client || approvals.contains(&call.call_id) => {
                    Some(self.decide(run, call, &owners[i], approvals, turn).await)
                }
                None => None,
            };
        }
        // A turn that pauses runs none of its server calls now; the
        // continuation classifies them again, so the policy sees each call
        // once (seed 004 rate limits count calls).
        let pauses = from_model
            && decided
                .iter()
                .any(|d| matches!(d, Some(Disposition::Client | Disposition::Approval)));
        let mut pending = Vec::with_capacity(calls.len());
        for ((call, owner), slot) in calls.into_iter().zip(owners).zip(decided) {
            let disposition = match slot {
                Some(d) => d,
                None if pauses => Disposition::Execute {
                    runner: runner(&owner),
                    arguments: call.arguments.clone(),
                },
                None => self.decide(run, &call, &owner, approvals, turn).await,
            };
            pending.push(PendingCall { call, disposition });
        }
        pending
    }

    /// The policy's word on one call, and who runs it.
    async fn decide(
        &self,
        run: &PreparedRun,
        call: &ToolCall,
        owner: &CallOwner,
        approvals: &HashSet<String>,
        turn: u32,
    ) -> Disposition {
        // A call the client approved is not sent back for approval.
        let approved = run.mcp.approvals.contains_key(&call.call_id)
            && !run.mcp.denied.contains_key(&call.call_id);
        let ctx = run.policy_context(turn, approved);
        let def = run.tools.get(&call.name);
        match self.inner.policy.before_call(&ctx, call, def).await {
            CallDecision::Deny { reason } => {
                Disposition::Reject(format!("Error: tool '{}' was blocked: {reason}", call.name))
            }
            CallDecision::RequireApproval if !approved => Disposition::Approval,
            _ if approvals.contains(&call.call_id) => Disposition::Approval,
            decision => {
                let arguments = match decision {
                    CallDecision::AllowWithArguments(a) => a,
                    _ => call.arguments.clone(),
                };
                match owner {
                    CallOwner::Executor(_) | CallOwner::Mcp => Disposition::Execute {
                        runner: runner(owner),
                        arguments,
                    },
                    _ => Disposition::Client,
                }
            }
        }
    }
}

/// Calls that are refused whatever the policy says.
fn static_rejection(run: &PreparedRun, call: &ToolCall, owner: &CallOwner) -> Option<Disposition> {
    if let Some(reason) = run.mcp.denied.get(&call.call_id) {
        Some(Disposition::Reject(format!("Error: {reason}")))
    } else if *owner == CallOwner::Unknown {
        Some(Disposition::Reject(format!(
            "Error: tool '{}' is not available in this request.",
            call.name
        )))
    } else if !run.tools.is_allowed(&call.name) {
        Some(Disposition::Reject(format!(
            "Error: tool '{}' is not allowed for this request (allowed_tools).",
            call.name
        )))
    } else {
        None
    }
}

fn runner(owner: &CallOwner) -> Runner {
    match owner {
        CallOwner::Executor(i) => Runner::Executor(*i),
        _ => Runner::Mcp,
    }
}

/// Closes what is still open when the loop stops: an `mcp_call` paused for
/// the client stays `in_progress` (a continuation runs it); anything else
/// was cut short.
async fn close_open_items(out: &mut Emitter<'_>, paused: bool) {
    for idx in out.open_items() {
        if let Item::McpCall(c) = out.item_mut(idx) {
            if !paused {
                c.status = Some(McpCallStatus::Incomplete);
            }
        }
        out.item_done(idx).await;
    }
}

fn provider_failure(e: &ProviderError) -> Ending {
    Ending::Failed(RunFailure::from_provider(e))
}

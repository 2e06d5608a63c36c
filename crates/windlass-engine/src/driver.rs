//! `Engine::run`: the one agent loop every surface drives, as named steps
//! around `decide_next_action`.

use std::collections::HashSet;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::{debug, warn, Instrument, Span};
use windlass_protocol::{EventData, Item, McpCallStatus, Usage};

use crate::classify::{classify, Classified, Source};
use crate::config::LoopMode;
use crate::context_fit;
use crate::deadline::Deadline;
use crate::emitter::Emitter;
use crate::engine::{Engine, EngineInner};
use crate::error::RunFailure;
use crate::execute::execute_calls;
use crate::finish::{finalize, Ending};
use crate::outcome::{PauseReason, RunOutcome, StopReason};
use crate::ports::agent::events::{CallReport, CallVerdict, RunEvent, TurnReport};
use crate::ports::agent::policy::{LoopBudget, TurnDecision};
use crate::ports::agent::sink::EventSink;
use crate::ports::agent::tools::{ToolCall, ToolContext};
use crate::prepared::PreparedRun;
use crate::spans;
use crate::state::{
    decide_next_action, Disposition, Finish, Interrupt, LoopState, NextAction, PendingCall, Phase,
    Verification,
};
use crate::turn::{run_turn, TurnError, TurnOutcome};
use crate::upstream::TurnChoice;

#[path = "check_turn.rs"]
mod check_turn;
#[path = "value_turn.rs"]
mod value_turn;

/// One run in progress: what the steps share.
struct Driver<'e, 's> {
    inner: &'e EngineInner,
    run: PreparedRun,
    out: Emitter<'s>,
    state: LoopState,
    usage: Option<Usage>,
    started: Instant,
    /// What the upstream sees beyond the output (the check's exchange).
    hidden: Vec<(usize, Vec<Item>)>,
    /// The draft answer while the completion check runs.
    check: Option<check_turn::Draft>,
    /// Where the last model turn's items start in the output.
    turn_at: usize,
    /// What the loop asks of the next turn's tool choice.
    choice: TurnChoice,
    /// How close the transcript is to the model's context.
    fit: context_fit::Fit,
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
        let span = spans::response(&run.response.id, &run.response.model);
        let outcome = self.drive(run, sink, cancel).instrument(span.clone()).await;
        spans::record_usage(&span, outcome.response.usage.as_ref());
        outcome
    }

    async fn drive(
        &self,
        run: PreparedRun,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> RunOutcome {
        let inner = &*self.inner;
        let deadline = Deadline::start(inner.config.max_response_time, cancel);
        let out = Emitter::new(run.response.clone(), sink, deadline.outer().clone())
            .with_include(run.request.include.clone().unwrap_or_default());
        let fit = context_fit::Fit::new(context_fit::manages_context(&run.request));
        let mut d = Driver {
            inner,
            state: initial_state(&run),
            run,
            out,
            usage: None,
            started: Instant::now(),
            hidden: Vec::new(),
            check: None,
            turn_at: 0,
            choice: TurnChoice::Free,
            fit,
        };
        d.out
            .emit_snapshot(|response| EventData::Created { response })
            .await;
        // A background response is announced as queued (as OpenAI does)
        // before it starts running.
        if d.out.response.status == windlass_protocol::ResponseStatus::Queued {
            d.out
                .emit_snapshot(|response| EventData::Queued { response })
                .await;
        }
        // A queued (background) response starts running now.
        d.out.response.status = windlass_protocol::ResponseStatus::InProgress;
        d.out
            .emit_snapshot(|response| EventData::InProgress { response })
            .await;
        let ending = d.run_loop(&deadline.token).await;
        d.settle_check().await;
        let paused = matches!(ending, Ending::Paused(_));
        close_open_items(&mut d.out, paused).await;
        let ending = match ending {
            Ending::Cancelled if deadline.expired() => {
                Ending::Done(Finish::Stopped(StopReason::MaxResponseTime))
            }
            other => other,
        };
        drop(deadline);
        if let Ending::Failed(f) = &ending {
            warn!(code = %f.code(), message = %f.message, "response failed");
        }
        finalize(inner, &d.run, d.out, ending, d.usage).await
    }
}

fn initial_state(run: &PreparedRun) -> LoopState {
    let mut state = LoopState::new(run.limits.max_turns, run.limits.call_budget, run.mode);
    state.error_threshold = run.limits.error_threshold;
    if run.limits.techniques.checks() {
        state.verification = Verification::Armed;
    }
    state
}

impl Driver<'_, '_> {
    /// Lists new MCP servers, settles the parent's calls, then loops.
    async fn run_loop(&mut self, cancel: &CancellationToken) -> Ending {
        let listed =
            crate::mcp::listing::list_new_servers(self.inner, &mut self.run, &mut self.out, cancel)
                .await;
        if let Err(ending) = listed {
            return ending;
        }
        if self.run.mode == LoopMode::Agentic && !self.run.pending.is_empty() {
            let calls = self.run.pending.clone();
            self.state.pending = self
                .classify(calls, Source::Continuation, &HashSet::new())
                .await
                .pending;
        }
        loop {
            if cancel.is_cancelled() {
                return Ending::Cancelled;
            }
            let step = match decide_next_action(&self.state) {
                NextAction::CallModel => self.model_step(cancel).await,
                NextAction::Verify => {
                    self.verify();
                    Ok(())
                }
                NextAction::NudgeValues => {
                    self.nudge_values().await;
                    Ok(())
                }
                NextAction::Reprompt => {
                    self.state.missing_step = false;
                    self.state.phase = Phase::AfterTools;
                    Ok(())
                }
                NextAction::ExecuteTools(plan) => self.tools_step(plan, cancel).await,
                NextAction::Interrupt(Interrupt::ClientCalls) => {
                    Err(Ending::Paused(PauseReason::ClientCalls))
                }
                NextAction::Interrupt(Interrupt::Approval) => {
                    Err(Ending::Paused(PauseReason::Approval))
                }
                NextAction::Finish(f) => Err(Ending::Done(f)),
            };
            if let Err(ending) = step {
                return ending;
            }
        }
    }

    async fn classify(
        &mut self,
        calls: Vec<ToolCall>,
        source: Source,
        approvals: &HashSet<String>,
    ) -> Classified {
        classify(
            self.inner,
            &self.run,
            &mut self.out,
            calls,
            source,
            approvals,
        )
        .await
    }

    /// One model turn: the policy's and the budget's say, the upstream call,
    /// its items and events, then who handles each of its calls.
    async fn model_step(&mut self, cancel: &CancellationToken) -> Result<(), Ending> {
        if let Some(stop) = turn_gate(self.inner, &self.run, &self.state, self.started).await {
            self.state.stop = Some(stop);
            return Ok(());
        }
        self.fit
            .check(
                &*self.inner.provider,
                &self.run.response.model,
                &self.out.response.output,
                &self.hidden,
                cancel,
            )
            .await?;
        let turn = self.state.turns;
        let verification = self.check.is_some();
        self.arm_value_check();
        self.turn_at = self.out.response.output.len();
        if self.holds_turn() {
            self.out.hold();
        }
        self.out.observe(RunEvent::TurnStarted { turn }).await;
        let span = spans::model_turn(&self.run.response.model, turn);
        let turn_started = Instant::now();
        let result = self.call_model(turn, &span, cancel).await?;
        self.state.turns += 1;
        let duration = turn_started.elapsed();
        let mut report = TurnReport {
            turn,
            duration,
            usage: None,
            finish: None,
            tool_calls: 0,
            verification,
            error: None,
        };
        let outcome = match result {
            Ok(o) => o,
            Err(e) => return Err(self.turn_failed(report, e).await),
        };
        span.in_scope(|| {
            debug!(
                duration_ms = duration.as_secs_f64() * 1000.0,
                tool_calls = outcome.calls.len(),
                "model turn done"
            )
        });
        spans::record_usage(&span, outcome.usage.as_ref());
        self.fit.turn_done(
            outcome.usage.as_ref(),
            self.out.response.output.len(),
            self.hidden.len(),
        );
        if verification {
            self.check_answered(turn, outcome.calls.is_empty()).await;
        } else if !outcome.calls.is_empty() {
            self.out.release().await;
        }
        if let Some(u) = &outcome.usage {
            self.usage.get_or_insert_with(Usage::default).add(u);
        }
        report.usage = outcome.usage;
        report.finish = outcome.finish.clone();
        report.tool_calls = outcome.calls.len();
        self.observe_turn(report).await;
        self.state.last_finish = outcome.finish;
        self.state.model_calls += outcome.calls.len() as u64;
        self.state.pending = match self.run.mode {
            LoopMode::SingleShot => self.returned(outcome.calls, turn).await,
            LoopMode::Agentic => {
                let classified = self
                    .classify(outcome.calls, Source::Turn(turn), &outcome.approvals)
                    .await;
                if classified.stalled {
                    self.choice = TurnChoice::Answer;
                }
                classified.pending
            }
        };
        self.state.phase = Phase::AfterModel;
        Ok(())
    }

    /// The upstream call of `turn` and its streamed answer, inside `span`.
    /// `Err` only when cancelled before the upstream answered (the turn
    /// then does not count).
    async fn call_model(
        &mut self,
        turn: u32,
        span: &Span,
        cancel: &CancellationToken,
    ) -> Result<Result<TurnOutcome, TurnError>, Ending> {
        let (run, hidden) = (&self.run, &self.hidden);
        let choice = std::mem::take(&mut self.choice);
        let build = |output: &[Item]| {
            crate::upstream::model_request(run, output, turn, run.stream(), hidden, choice)
        };
        let request = context_fit::fitted_request(
            self.inner,
            run,
            &mut self.out,
            &mut self.usage,
            build,
            cancel,
        )
        .await?;
        let stream = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Ending::Cancelled),
            s = self.inner.provider.start(request).instrument(span.clone()) => s,
        };
        Ok(match stream {
            Ok(stream) => {
                run_turn(&mut self.out, stream, &self.run.tools, cancel)
                    .instrument(span.clone())
                    .await
                    .0
            }
            // Refused before answering: still a (failed) upstream call.
            Err(e) => Err(TurnError::Provider(e)),
        })
    }

    /// Reports a turn that did not finish; the run ends with it.
    async fn turn_failed(&mut self, mut report: TurnReport, e: TurnError) -> Ending {
        let ending = match e {
            TurnError::Cancelled => Ending::Cancelled,
            TurnError::Provider(e) => Ending::Failed(RunFailure::from_provider(&e)),
        };
        report.error = Some(match &ending {
            Ending::Failed(f) => f.code(),
            _ => "cancelled",
        });
        self.observe_turn(report).await;
        ending
    }

    async fn observe_turn(&mut self, report: TurnReport) {
        self.out.observe(RunEvent::TurnFinished(report)).await;
    }

    /// Single-shot: the calls go back to the client as they are.
    async fn returned(&mut self, calls: Vec<ToolCall>, turn: u32) -> Vec<PendingCall> {
        let mut pending = Vec::with_capacity(calls.len());
        for call in calls {
            let owner = self.run.tools.owner(&call.name).cloned();
            let verdict = CallVerdict::Client {
                arguments: call.arguments.clone(),
            };
            self.out
                .observe(RunEvent::CallDecided(CallReport {
                    turn: Some(turn),
                    call: call.clone(),
                    owner,
                    verdict,
                    rule: None,
                }))
                .await;
            pending.push(PendingCall {
                call,
                disposition: Disposition::Client,
            });
        }
        pending
    }

    /// Runs a planned round of server calls.
    async fn tools_step(
        &mut self,
        plan: Vec<PendingCall>,
        cancel: &CancellationToken,
    ) -> Result<(), Ending> {
        let planned: Vec<String> = plan.iter().map(|p| p.call.call_id.clone()).collect();
        // A model turn's round: its client and deferred calls still pause it.
        let of_turn = self.state.phase == Phase::AfterModel;
        let ctx = ToolContext {
            response_id: self.run.response.id.clone(),
            cancel: cancel.child_token(),
            turn: self.state.turns,
            tenant: self.run.tenant.clone(),
            hosted: None,
        };
        let ran = execute_calls(self.inner, &self.run, &mut self.out, plan, &ctx)
            .await
            .ok_or(Ending::Cancelled)?;
        self.state.executed_calls += ran.executed;
        self.state.succeeded_calls += ran.failed.iter().filter(|f| !**f).count() as u64;
        for failed in ran.failed {
            self.state.consecutive_errors = if failed {
                self.state.consecutive_errors + 1
            } else {
                0
            };
        }
        // What is left is over the tool-call budget (server calls), waits
        // for an approval, is the client's to run (a pausing turn), or is a
        // continuation's unanswered client calls, which go to the model as
        // they are.
        self.state.pending.retain(|p| {
            !planned.contains(&p.call.call_id)
                && match p.disposition {
                    Disposition::Execute { .. } | Disposition::Approval => true,
                    // A pausing turn's calls, answered by the continuation.
                    Disposition::Client | Disposition::Deferred | Disposition::Reject(_) => of_turn,
                }
        });
        self.state.phase = Phase::AfterTools;
        Ok(())
    }
}

/// The policy's say before a model turn. (A free function: a future
/// holding `&Driver` would need the sink to be `Sync`.)
async fn turn_gate(
    inner: &EngineInner,
    run: &PreparedRun,
    state: &LoopState,
    started: Instant,
) -> Option<Finish> {
    let ctx = run.policy_context(state.turns, false);
    let budget = LoopBudget {
        turns: state.turns,
        tool_calls: state.executed_calls,
        elapsed: started.elapsed(),
    };
    match inner.policy.before_turn(&ctx, &budget).await {
        TurnDecision::Continue => None,
        TurnDecision::Stop { reason } => Some(Finish::Stopped(StopReason::Policy(reason))),
    }
}

/// Closes what is still open when the loop stops: an `mcp_call` paused for
/// the client stays `in_progress` (a continuation runs it); anything else
/// was cut short.
async fn close_open_items(out: &mut Emitter<'_>, paused: bool) {
    for idx in out.open_items() {
        match out.item_mut(idx) {
            Item::McpCall(c) => {
                if !paused {
                    c.status = Some(McpCallStatus::Incomplete);
                }
            }
            item => crate::hosted::calls::close_unrun(item, paused),
        }
        out.item_done(idx).await;
    }
}

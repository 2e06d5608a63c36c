use super::*;

fn call(name: &str, d: Disposition) -> PendingCall {
    PendingCall {
        call: ToolCall {
            call_id: format!("call_{name}"),
            name: name.into(),
            arguments: "{}".into(),
        },
        disposition: d,
    }
}

fn exec() -> Disposition {
    Disposition::Execute {
        runner: Runner::Executor(0),
        arguments: "{}".into(),
    }
}

fn after_model(pending: Vec<PendingCall>) -> LoopState {
    let mut s = LoopState::new(10, 100, LoopMode::Agentic);
    s.phase = Phase::AfterModel;
    s.turns = 1;
    s.pending = pending;
    s
}

#[test]
fn start_calls_the_model() {
    let s = LoopState::new(10, 100, LoopMode::Agentic);
    assert_eq!(decide_next_action(&s), NextAction::CallModel);
}

#[test]
fn start_with_pending_server_calls_runs_them_first() {
    let mut s = LoopState::new(10, 100, LoopMode::Agentic);
    s.pending = vec![call("a", exec()), call("b", Disposition::Client)];
    match decide_next_action(&s) {
        NextAction::ExecuteTools(plan) => {
            assert_eq!(plan.len(), 1);
            assert_eq!(plan[0].call.name, "a");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn text_only_answer_completes() {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Stop);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
}

#[test]
fn length_finish_is_incomplete() {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Length);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Stopped(StopReason::MaxOutputTokens))
    );
}

#[test]
fn single_shot_returns_calls_completed() {
    let mut s = after_model(vec![call("a", Disposition::Client)]);
    s.mode = LoopMode::SingleShot;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
}

#[test]
fn any_client_call_pauses_the_whole_turn() {
    let s = after_model(vec![
        call("a", Disposition::Deferred),
        call("b", Disposition::Client),
    ]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::ClientCalls)
    );
}

#[test]
fn a_pausing_turn_runs_its_hosted_calls_then_pauses() {
    // Hosted calls are decided (not deferred) in a pausing turn.
    // A refusal in that turn is left to the continuation, as before.
    let mut s = after_model(vec![
        call("web_search", exec()),
        call("f", Disposition::Client),
        call("g", Disposition::Deferred),
        call("h", Disposition::Reject("not allowed".into())),
    ]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::ExecuteTools(vec![call("web_search", exec())])
    );
    // The driver keeps the turn's client and deferred calls after the round.
    s.phase = Phase::AfterTools;
    s.pending.remove(0);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::ClientCalls)
    );
}

#[test]
fn approval_interrupts_once_the_hosted_calls_ran() {
    let mut s = after_model(vec![call("a", exec()), call("b", Disposition::Approval)]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::ExecuteTools(vec![call("a", exec())])
    );
    s.phase = Phase::AfterTools;
    s.pending.remove(0);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::Approval)
    );
    let s = after_model(vec![
        call("a", Disposition::Deferred),
        call("b", Disposition::Approval),
    ]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::Approval)
    );
}

#[test]
fn server_and_rejected_calls_execute_in_model_order() {
    let s = after_model(vec![
        call("a", exec()),
        call("b", Disposition::Reject("not allowed".into())),
        call("c", exec()),
    ]);
    match decide_next_action(&s) {
        NextAction::ExecuteTools(plan) => {
            let names: Vec<_> = plan.iter().map(|p| p.call.name.as_str()).collect();
            assert_eq!(names, ["a", "b", "c"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn budget_limits_the_plan_and_then_finishes() {
    let mut s = after_model(vec![call("a", exec()), call("b", exec())]);
    s.call_budget = 1;
    match decide_next_action(&s) {
        NextAction::ExecuteTools(plan) => assert_eq!(plan.len(), 1),
        other => panic!("{other:?}"),
    }
    s.executed_calls = 1;
    let finish = match decide_next_action(&s) {
        NextAction::Finish(f) => f,
        other => panic!("{other:?}"),
    };
    assert_eq!(finish, Finish::Stopped(StopReason::MaxToolCalls));
}

#[test]
fn after_tools_calls_the_model_until_the_turn_limit() {
    let mut s = LoopState::new(2, 100, LoopMode::Agentic);
    s.phase = Phase::AfterTools;
    s.turns = 1;
    assert_eq!(decide_next_action(&s), NextAction::CallModel);
    s.turns = 2;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Stopped(StopReason::MaxTurns))
    );
}

#[test]
fn leftover_calls_after_tools_end_with_max_tool_calls() {
    let mut s = LoopState::new(10, 1, LoopMode::Agentic);
    s.phase = Phase::AfterTools;
    s.turns = 1;
    s.executed_calls = 1;
    s.pending = vec![call("b", exec())];
    match decide_next_action(&s) {
        NextAction::Finish(f) => assert_eq!(f, Finish::Stopped(StopReason::MaxToolCalls)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_external_stop_wins() {
    let mut s = after_model(vec![call("a", exec())]);
    s.stop = Some(Finish::Stopped(StopReason::Policy("budget".into())));
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Stopped(StopReason::Policy("budget".into())))
    );
}

#[test]
fn a_paused_turn_defers_its_server_calls() {
    let s = after_model(vec![
        call("a", Disposition::Deferred),
        call("b", Disposition::Client),
    ]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::ClientCalls)
    );
}

#[test]
fn consecutive_errors_at_the_threshold_stop_the_loop() {
    let mut s = LoopState::new(10, 100, LoopMode::Agentic);
    s.phase = Phase::AfterTools;
    s.turns = 1;
    s.error_threshold = Some(3);
    s.consecutive_errors = 2;
    assert_eq!(decide_next_action(&s), NextAction::CallModel);
    s.consecutive_errors = 3;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Stopped(StopReason::ToolErrorThreshold))
    );
}

#[test]
fn completion_check_asks_once_after_tools_were_used() {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Stop);
    s.verification = Verification::Armed;
    // No tool used in this response: the answer stands.
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    s.model_calls = 1;
    assert_eq!(decide_next_action(&s), NextAction::Verify);
    s.verification = Verification::Sent;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    // No turn left to ask in: the answer stands.
    s.verification = Verification::Armed;
    s.turns = s.max_turns;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
}

#[test]
fn a_missing_step_in_the_checks_answer_asks_once_more_while_turns_remain() {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Stop);
    s.model_calls = 1;
    s.verification = Verification::Sent;
    s.missing_step = true;
    assert_eq!(decide_next_action(&s), NextAction::Reprompt);
    s.turns = s.max_turns;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    // Only the check's answer is read: before it, the check comes first.
    s.turns = 0;
    s.verification = Verification::Armed;
    assert_eq!(decide_next_action(&s), NextAction::Verify);
}

#[test]
fn a_continuation_call_waiting_for_approval_pauses_after_the_others_ran() {
    let mut s = LoopState::new(10, 100, LoopMode::Agentic);
    s.pending = vec![call("a", exec()), call("b", Disposition::Approval)];
    match decide_next_action(&s) {
        NextAction::ExecuteTools(plan) => assert_eq!(plan.len(), 1),
        other => panic!("{other:?}"),
    }
    s.phase = Phase::AfterTools;
    s.pending = vec![call("b", Disposition::Approval)];
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::Approval)
    );
    s.phase = Phase::Start;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::Approval)
    );
}

/// A text-only answer after a successful call, with a value of the request
/// still unused.
fn unused_value_answer() -> LoopState {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Stop);
    s.model_calls = 1;
    s.succeeded_calls = 1;
    s.unused_values = true;
    s
}

#[test]
fn an_answer_leaving_a_value_unused_is_nudged_at_most_twice() {
    let mut s = unused_value_answer();
    assert_eq!(decide_next_action(&s), NextAction::NudgeValues);
    s.value_nudges = 1;
    assert_eq!(decide_next_action(&s), NextAction::NudgeValues);
    s.value_nudges = MAX_VALUE_NUDGES;
    assert!(!s.value_nudge_armed());
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    // Every value used: the answer stands.
    let mut s = unused_value_answer();
    s.unused_values = false;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
}

#[test]
fn no_value_nudge_without_a_successful_call_nor_turns_left() {
    let mut s = unused_value_answer();
    s.succeeded_calls = 0;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    let mut s = unused_value_answer();
    s.turns = s.max_turns;
    // Armed (the turn's events were held), but no turn left to nudge in.
    assert!(s.value_nudge_armed());
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    // A cut-off answer is incomplete, not nudged.
    let mut s = unused_value_answer();
    s.last_finish = Some(FinishReason::Length);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Stopped(StopReason::MaxOutputTokens))
    );
}

#[test]
fn the_stall_stops_forced_answer_and_single_shot_are_not_nudged() {
    let mut s = unused_value_answer();
    s.answer_forced = true;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
    let mut s = unused_value_answer();
    s.mode = LoopMode::SingleShot;
    assert!(!s.value_nudge_armed());
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::Completed)
    );
}

#[test]
fn the_value_nudge_comes_before_the_completion_check() {
    let mut s = unused_value_answer();
    s.verification = Verification::Armed;
    assert_eq!(decide_next_action(&s), NextAction::NudgeValues);
    s.value_nudges = MAX_VALUE_NUDGES;
    assert_eq!(decide_next_action(&s), NextAction::Verify);
}

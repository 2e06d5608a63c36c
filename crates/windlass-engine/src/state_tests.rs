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
    let mut s = LoopState::new(10, 100, false);
    s.phase = Phase::AfterModel;
    s.turns = 1;
    s.pending = pending;
    s
}

#[test]
fn start_calls_the_model() {
    let s = LoopState::new(10, 100, false);
    assert_eq!(decide_next_action(&s), NextAction::CallModel);
}

#[test]
fn start_with_pending_server_calls_runs_them_first() {
    let mut s = LoopState::new(10, 100, false);
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
        NextAction::Finish(Finish::completed())
    );
}

#[test]
fn length_finish_is_incomplete() {
    let mut s = after_model(vec![]);
    s.last_finish = Some(FinishReason::Length);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::incomplete("max_output_tokens"))
    );
}

#[test]
fn single_shot_returns_calls_completed() {
    let mut s = after_model(vec![call("a", Disposition::Client)]);
    s.single_shot = true;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::completed())
    );
}

#[test]
fn any_client_call_pauses_the_whole_turn() {
    let s = after_model(vec![call("a", exec()), call("b", Disposition::Client)]);
    assert_eq!(
        decide_next_action(&s),
        NextAction::Interrupt(Interrupt::ClientCalls)
    );
}

#[test]
fn approval_interrupts_before_any_call_runs() {
    let s = after_model(vec![call("a", exec()), call("b", Disposition::Approval)]);
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
    assert_eq!(finish.status, ResponseStatus::Completed);
    assert_eq!(finish.incomplete_reason.as_deref(), Some("max_tool_calls"));
}

#[test]
fn after_tools_calls_the_model_until_the_turn_limit() {
    let mut s = LoopState::new(2, 100, false);
    s.phase = Phase::AfterTools;
    s.turns = 1;
    assert_eq!(decide_next_action(&s), NextAction::CallModel);
    s.turns = 2;
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::incomplete("max_turns"))
    );
}

#[test]
fn leftover_calls_after_tools_end_with_max_tool_calls() {
    let mut s = LoopState::new(10, 1, false);
    s.phase = Phase::AfterTools;
    s.turns = 1;
    s.executed_calls = 1;
    s.pending = vec![call("b", exec())];
    match decide_next_action(&s) {
        NextAction::Finish(f) => assert_eq!(f.incomplete_reason.as_deref(), Some("max_tool_calls")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_external_stop_wins() {
    let mut s = after_model(vec![call("a", exec())]);
    s.stop = Some(Finish::incomplete("budget"));
    assert_eq!(
        decide_next_action(&s),
        NextAction::Finish(Finish::incomplete("budget"))
    );
}

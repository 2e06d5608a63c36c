//! `Client::prompt` / `Agent::prompt` (one call to the final answer), the
//! SDK's loop limits, the completion check and the trace, against the
//! scripted upstream.

use crate::support::Pair;
use windlass::sdk::{Agent, AgentBuilder, StopReason, Termination, Tool, ToolError};
use windlass_testkit::{FakeUpstream, Reply};

fn add() -> Tool {
    Tool::new("add", "Add two numbers", |p: Pair| async move {
        Ok::<_, ToolError>(p.a + p.b)
    })
}

fn fail() -> Tool {
    Tool::new("fail", "Always fails", |_: Pair| async move {
        Err::<i64, _>(ToolError::new("broken"))
    })
}

fn agent(up: &FakeUpstream, auto: bool) -> AgentBuilder {
    Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .auto_execute_tools(auto)
        .tool(add())
        .tool(fail())
}

fn last_messages(up: &FakeUpstream) -> Vec<serde_json::Value> {
    up.requests()
        .last()
        .and_then(|r| r["messages"].as_array().cloned())
        .unwrap_or_default()
}

#[tokio::test]
async fn prompt_runs_tools_to_the_answer_in_both_modes() {
    for auto in [true, false] {
        let up = FakeUpstream::start().await;
        up.push(Reply::tool_call("add", r#"{"a": 25, "b": 17}"#));
        up.push(Reply::text("25 + 17 = 42"));
        let agent = agent(&up, auto).build().unwrap();
        let r = agent.prompt("What is 25 + 17?").await.unwrap();
        assert_eq!(r.termination, Termination::Completed, "auto={auto}");
        assert!(r.is_completed());
        assert_eq!(r.text, "25 + 17 = 42");
        assert_eq!(r.turns, 2, "auto={auto}");
        assert_eq!(r.tool_calls, 1, "auto={auto}");
        assert!(r.usage.total_tokens > 0);
        assert!(!r.response_id.is_empty());
        // The tool really ran: the model got its result.
        let tool = last_messages(&up)
            .into_iter()
            .find(|m| m["role"] == "tool")
            .expect("a tool message");
        assert_eq!(tool["content"], "42");
        let trace = r.trace.expect("a trace");
        assert!(!trace.steps.is_empty());
    }
}

#[tokio::test]
async fn the_trace_of_an_auto_run_shows_each_call() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("3"));
    let r = agent(&up, true)
        .build()
        .unwrap()
        .prompt("1+2")
        .await
        .unwrap();
    let trace = r.trace.unwrap();
    assert_eq!(trace.steps.len(), 2);
    assert_eq!(trace.actions.len(), 1);
    let a = &trace.actions[0];
    assert_eq!(a.tool, "add");
    assert_eq!(a.owner.as_deref(), Some("local"));
    assert_eq!(a.decision, "allow");
    assert_eq!(a.outcome, "ok");
    assert_eq!(a.output_bytes, Some(1));
}

#[tokio::test]
async fn the_error_threshold_ends_the_run_incomplete() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("fail", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::tool_call("fail", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("never asked"));
    let agent = agent(&up, true).tool_error_threshold(2).build().unwrap();
    let r = agent.prompt("go").await.unwrap();
    assert_eq!(
        r.termination,
        Termination::Incomplete {
            reason: StopReason::ToolErrorThreshold
        }
    );
    assert_eq!(up.request_count(), 2);
}

#[tokio::test]
async fn the_completion_check_asks_once_more_after_tools() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 2, "b": 2}"#));
    up.push(Reply::text("maybe 4"));
    up.push(Reply::text("4, verified"));
    let agent = agent(&up, true).completion_check(true).build().unwrap();
    let r = agent.prompt("2+2").await.unwrap();
    assert_eq!(r.termination, Termination::Completed);
    assert_eq!(r.turns, 3);
    assert_eq!(r.text, "4, verified");
    let prompt = last_messages(&up).pop().unwrap();
    assert_eq!(prompt["role"], "system");
    assert_eq!(prompt["content"], windlass::engine::VERIFICATION_PROMPT);
    let steps = r.trace.unwrap().steps;
    assert!(steps[2].verification);
}

//! SDK hooks: UserPromptSubmit, PreToolUse, PostToolUse, in both modes.

use std::sync::{Arc, Mutex};

use crate::support::{run, termination, Pair};
use serde_json::json;
use windlass::sdk::{
    Agent, AgentBuilder, Block, Client, Hooks, Message, PromptDecision, SdkError, Termination,
    Tool, ToolDecision, ToolError, ToolErrorKind, ToolOutcome,
};
use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

/// `add`, recording each execution in `ran`.
fn add(ran: &Log) -> Tool {
    let ran = ran.clone();
    Tool::new("add", "Add two numbers", move |p: Pair| {
        ran.lock().unwrap().push(format!("{}+{}", p.a, p.b));
        async move { Ok::<_, ToolError>(p.a + p.b) }
    })
}

fn agent(up: &FakeUpstream, auto: bool) -> AgentBuilder {
    Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .auto_execute_tools(auto)
}

#[tokio::test]
async fn pre_tool_use_blocks_execution_in_auto_mode() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("Operation blocked"));
    let ran = log();
    let seen = log();
    let s = seen.clone();
    let hooks = Hooks::new().on_pre_tool_use(move |ev| {
        s.lock()
            .unwrap()
            .push(format!("{} {}", ev.tool_name, ev.input));
        async move {
            (ev.tool_name == "add").then(|| ToolDecision::Block {
                reason: "no arithmetic today".into(),
            })
        }
    });
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("Use add").await.unwrap();
    let blocks = run(&client).await;
    assert!(matches!(&blocks[0], Block::ToolUse(t) if t.name == "add"));
    match &blocks[1] {
        Block::ToolUseError { error, kind, .. } => {
            assert_eq!(*kind, ToolErrorKind::Blocked);
            assert!(error.contains("no arithmetic today"), "{error}");
        }
        b => panic!("{b:?}"),
    }
    assert_eq!(termination(&blocks), Termination::Completed);
    assert!(entries(&ran).is_empty(), "the tool must not run");
    assert_eq!(entries(&seen), [r#"add {"a":1,"b":2}"#]);
    let fed = up.tool_messages(1);
    assert!(fed[0].contains("blocked: no arithmetic today"), "{fed:?}");
    let h = client.history();
    assert_eq!(h.len(), 4);
    assert!(matches!(&h[2], Message::ToolResult { is_error: true, .. }));
}

#[tokio::test]
async fn pre_tool_use_can_rewrite_the_input() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("ok"));
    let ran = log();
    let hooks = Hooks::new().on_pre_tool_use(|ev| async move {
        Some(ToolDecision::Rewrite(json!({"a": ev.input["a"], "b": 100})))
    });
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("add").await.unwrap();
    let blocks = run(&client).await;
    assert!(matches!(&blocks[0], Block::ToolUse(t) if t.input == json!({"a": 1, "b": 100})));
    assert!(matches!(&blocks[1], Block::ToolResult { content, .. } if content == "101"));
    assert_eq!(entries(&ran), ["1+100"]);
}

#[tokio::test]
async fn several_hooks_run_in_order_and_the_first_decision_wins() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("ok"));
    let order = log();
    let (o1, o2, o3) = (order.clone(), order.clone(), order.clone());
    let hooks = Hooks::new()
        .on_pre_tool_use(move |_| {
            o1.lock().unwrap().push("first: pass".into());
            async { None }
        })
        .on_pre_tool_use(move |_| {
            o2.lock().unwrap().push("second: block".into());
            async {
                Some(ToolDecision::Block {
                    reason: "second says no".into(),
                })
            }
        })
        .on_pre_tool_use(move |_| {
            o3.lock().unwrap().push("third: allow".into());
            async { Some(ToolDecision::Allow) }
        });
    let ran = log();
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("add").await.unwrap();
    let blocks = run(&client).await;
    assert!(blocks.iter().any(|b| matches!(
        b,
        Block::ToolUseError {
            kind: ToolErrorKind::Blocked,
            ..
        }
    )));
    assert_eq!(entries(&order), ["first: pass", "second: block"]);
    assert!(entries(&ran).is_empty());
}

#[tokio::test]
async fn user_prompt_submit_fires_once_not_on_continuation() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("Result: 3"));
    let prompts = log();
    let p = prompts.clone();
    let hooks = Hooks::new().on_user_prompt_submit(move |ev| {
        p.lock().unwrap().push(ev.prompt);
        async { None }
    });
    let ran = log();
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("Calculate 1 + 2").await.unwrap();
    let blocks = run(&client).await;
    assert_eq!(termination(&blocks), Termination::Completed);
    assert_eq!(up.request_count(), 2);
    assert_eq!(entries(&prompts), ["Calculate 1 + 2"]);
}

#[tokio::test]
async fn user_prompt_submit_can_rewrite_or_block() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("ok"));
    let hooks = Hooks::new().on_user_prompt_submit(|ev| async move {
        if ev.prompt.contains("password") {
            Some(PromptDecision::Block {
                reason: "no secrets".into(),
            })
        } else {
            Some(PromptDecision::Rewrite(ev.prompt.to_uppercase()))
        }
    });
    let client = Client::new(agent(&up, true).hooks(hooks).build().unwrap());
    let err = client.query("my password is hunter2").await.unwrap_err();
    assert!(matches!(err, SdkError::PromptBlocked { ref reason } if reason == "no secrets"));
    assert_eq!(up.request_count(), 0);
    assert!(client.history().is_empty());

    client.query("hello").await.unwrap();
    run(&client).await;
    let msgs = up.requests()[0]["messages"].clone();
    assert_eq!(msgs[0]["content"], "HELLO");
    assert_eq!(
        client.history()[0],
        Message::User {
            content: "HELLO".into()
        }
    );
}

#[tokio::test]
async fn post_tool_use_sees_the_real_result_and_may_replace_it() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("add", r#"{"a": 1, "b": 2}"#),
        ToolCallSpec::new("add", r#"{"a": 20, "b": 22}"#),
    ]));
    up.push(Reply::text("done"));
    let seen = log();
    let s = seen.clone();
    let hooks = Hooks::new().on_post_tool_use(move |ev| {
        s.lock().unwrap().push(format!(
            "{} {} -> {} {}",
            ev.tool_name, ev.input, ev.result.content, ev.result.is_error
        ));
        async move { (ev.result.content == "42").then(|| ToolOutcome::ok("forty-two")) }
    });
    let ran = log();
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("add twice").await.unwrap();
    let blocks = run(&client).await;
    let mut seen = entries(&seen);
    seen.sort();
    assert_eq!(
        seen,
        [
            r#"add {"a":1,"b":2} -> 3 false"#,
            r#"add {"a":20,"b":22} -> 42 false"#
        ]
    );
    let results: Vec<_> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["3", "forty-two"]);
    assert_eq!(up.tool_messages(1), ["3", "forty-two"]);
}

#[tokio::test]
async fn hooks_gate_manual_mode_calls_once_across_the_continuation() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("add", r#"{"a": 1, "b": 2}"#),
        ToolCallSpec::new("add", r#"{"a": 6, "b": 6}"#),
    ]));
    up.push(Reply::text("1 + 2 = 3"));
    let pre = log();
    let post = log();
    let (p1, p2) = (pre.clone(), post.clone());
    let hooks = Hooks::new()
        .on_pre_tool_use(move |ev| {
            p1.lock().unwrap().push(ev.input.to_string());
            async move {
                (ev.input["a"] == json!(6)).then(|| ToolDecision::Block {
                    reason: "no sixes".into(),
                })
            }
        })
        .on_post_tool_use(move |ev| {
            p2.lock().unwrap().push(ev.result.content.clone());
            async { None }
        });
    let ran = log();
    let client = Client::new(
        agent(&up, false)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("add").await.unwrap();
    let blocks = run(&client).await;
    let kinds: Vec<_> = blocks
        .iter()
        .map(|b| match b {
            Block::ToolUse(_) => "use",
            Block::ToolUseError { .. } => "error",
            Block::Done { .. } => "done",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["use", "use", "error", "done"]);
    assert_eq!(termination(&blocks), Termination::AwaitingToolResults);
    // Only the allowed call waits for the caller.
    let pending = client.pending_tool_calls();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].input, json!({"a": 1, "b": 2}));
    let outcome = client.run_tool(&pending[0]).await;
    client
        .add_tool_result(&pending[0].id, outcome)
        .await
        .unwrap();
    client.continue_turn().await.unwrap();
    let more = run(&client).await;
    assert_eq!(termination(&more), Termination::Completed);
    // No second ToolUseError for the blocked call, and no second PreToolUse.
    assert!(!more.iter().any(|b| matches!(b, Block::ToolUseError { .. })));
    assert_eq!(entries(&pre).len(), 2);
    assert_eq!(entries(&post), ["3"]);
    let fed = up.tool_messages(1);
    assert_eq!(fed.len(), 2, "{fed:?}");
    assert!(fed.contains(&"3".to_owned()));
    assert!(fed.iter().any(|m| m.contains("blocked: no sixes")));
    let h = client.history();
    let results = h
        .iter()
        .filter(|m| matches!(m, Message::ToolResult { .. }))
        .count();
    assert_eq!(results, 2, "{h:#?}");
    assert!(matches!(h.last(), Some(Message::Assistant { content, .. }) if content == "1 + 2 = 3"));
}

#[tokio::test]
async fn a_panicking_hook_ends_the_run_failed_not_hanging() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    let hooks = Hooks::new().on_pre_tool_use(|_| async {
        if true {
            panic!("hook bug");
        }
        None
    });
    let ran = log();
    let client = Client::new(
        agent(&up, true)
            .tool(add(&ran))
            .hooks(hooks)
            .build()
            .unwrap(),
    );
    client.query("add").await.unwrap();
    let blocks = tokio::time::timeout(std::time::Duration::from_secs(10), run(&client))
        .await
        .expect("the stream ends");
    assert!(matches!(termination(&blocks), Termination::Failed { code, .. } if code == "aborted"));
    assert!(entries(&ran).is_empty());
}

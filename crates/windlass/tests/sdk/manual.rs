//! SDK manual mode (the default): the run stops at the model's tool calls,
//! the caller adds results and continues; and the standalone `query()`.

use std::sync::{Arc, Mutex};

use crate::support::{run, termination, Pair};
use serde_json::json;
use windlass::sdk::{
    query, Agent, AgentBuilder, Block, Client, Hooks, Message, SdkError, Termination, Tool,
    ToolError, ToolErrorKind, ToolOutcome, ToolUse,
};
use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};

fn add(ran: &Arc<Mutex<u32>>) -> Tool {
    let ran = ran.clone();
    Tool::new("add", "Add two numbers", move |p: Pair| {
        *ran.lock().unwrap() += 1;
        async move { Ok::<_, ToolError>(json!({"result": p.a + p.b})) }
    })
}

fn manual(up: &FakeUpstream) -> AgentBuilder {
    Agent::builder().model("m").base_url(up.base_url())
}

fn uses(blocks: &[Block]) -> Vec<ToolUse> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn manual_mode_returns_tool_uses_and_the_caller_continues() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("1 + 2 = 3"));
    let ran = Arc::new(Mutex::new(0));
    let prompts = Arc::new(Mutex::new(0));
    let p = prompts.clone();
    let hooks = Hooks::new().on_user_prompt_submit(move |_| {
        *p.lock().unwrap() += 1;
        async { None }
    });
    let agent = manual(&up)
        .tool(add(&ran))
        .auto_execute_tools(false)
        .hooks(hooks)
        .build()
        .unwrap();
    let client = Client::new(agent.clone());
    client.query("Calculate 1 + 2").await.unwrap();
    let blocks = run(&client).await;

    // Only the ToolUse (and the end), no execution.
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let call = match &blocks[0] {
        Block::ToolUse(t) => t.clone(),
        b => panic!("{b:?}"),
    };
    assert_eq!(call.name, "add");
    assert_eq!(call.input, json!({"a": 1, "b": 2}));
    assert_eq!(termination(&blocks), Termination::AwaitingToolResults);
    assert_eq!(*ran.lock().unwrap(), 0);
    assert_eq!(client.pending_tool_calls(), vec![call.clone()]);
    assert_eq!(
        client.last_response().unwrap().status,
        windlass::protocol::ResponseStatus::Completed
    );

    // The caller runs the tool and adds the result.
    let result = agent.tool("add").unwrap().call(&call.input).await;
    assert_eq!(result, ToolOutcome::ok(r#"{"result":3}"#));
    client.add_tool_result(&call.id, result).await.unwrap();
    let h = client.history();
    assert_eq!(h.len(), 3, "{h:#?}"); // user, assistant, tool
    assert!(matches!(&h[0], Message::User { content } if content == "Calculate 1 + 2"));
    assert!(matches!(&h[1], Message::Assistant { tool_calls, .. } if tool_calls.len() == 1));
    assert!(
        matches!(&h[2], Message::ToolResult { content, is_error: false, .. } if content == r#"{"result":3}"#)
    );
    assert!(client.pending_tool_calls().is_empty());

    // Continue without a new user message.
    client.continue_turn().await.unwrap();
    let more = run(&client).await;
    let text: String = more.iter().filter_map(Block::as_text).collect();
    assert_eq!(text, "1 + 2 = 3");
    assert_eq!(termination(&more), Termination::Completed);
    let msgs = up.requests()[1]["messages"].as_array().unwrap().clone();
    let roles: Vec<_> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(msgs[2]["content"], r#"{"result":3}"#);
    assert_eq!(msgs[2]["tool_call_id"], call.id.as_str());
    assert_eq!(client.history().len(), 4);
    assert_eq!(
        *prompts.lock().unwrap(),
        1,
        "no UserPromptSubmit on continuation"
    );
}

#[tokio::test]
async fn unknown_ids_and_unanswered_calls_are_refused() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("add", r#"{"a": 1, "b": 2}"#),
        ToolCallSpec::new("add", r#"{"a": 3, "b": 4}"#),
    ]));
    up.push(Reply::text("3 and 7"));
    let ran = Arc::new(Mutex::new(0));
    let client = Client::new(manual(&up).tool(add(&ran)).build().unwrap());
    assert!(matches!(
        client.continue_turn().await,
        Err(SdkError::NothingToContinue)
    ));
    client.query("two sums").await.unwrap();
    let blocks = run(&client).await;
    let calls = uses(&blocks);
    assert_eq!(calls.len(), 2);
    assert!(matches!(
        client.add_tool_result("call_nope", "1").await,
        Err(SdkError::UnknownToolCall(_))
    ));
    client
        .add_tool_result(&calls[0].id, client.run_tool(&calls[0]).await)
        .await
        .unwrap();
    // A result twice is refused too.
    assert!(client.add_tool_result(&calls[0].id, "again").await.is_err());
    match client.continue_turn().await {
        Err(SdkError::UnansweredToolCalls(ids)) => assert_eq!(ids, [calls[1].id.clone()]),
        r => panic!("{r:?}"),
    }
    assert!(matches!(
        client.query("new question").await,
        Err(SdkError::UnansweredToolCalls(_))
    ));
    client
        .add_tool_result(&calls[1].id, ToolOutcome::error("skipped"))
        .await
        .unwrap();
    client.continue_turn().await.unwrap();
    assert_eq!(termination(&run(&client).await), Termination::Completed);
    let msgs = up.requests()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[3]["content"], "skipped");
    assert_eq!(*ran.lock().unwrap(), 1);
}

#[tokio::test]
async fn manual_mode_unknown_tools_are_errors_not_pending_calls() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("nonexistent", "{}"),
        ToolCallSpec::new("add", r#"{"a": 1, "b": 1}"#),
    ]));
    up.push(Reply::text("2"));
    let ran = Arc::new(Mutex::new(0));
    let client = Client::new(manual(&up).tool(add(&ran)).build().unwrap());
    client.query("q").await.unwrap();
    let blocks = run(&client).await;
    assert!(blocks.iter().any(|b| matches!(
        b,
        Block::ToolUseError { kind: ToolErrorKind::UnknownTool, error, .. } if error == "Unknown tool: nonexistent"
    )));
    let pending = client.pending_tool_calls();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].name, "add");
    client
        .add_tool_result(&pending[0].id, client.run_tool(&pending[0]).await)
        .await
        .unwrap();
    client.continue_turn().await.unwrap();
    let more = run(&client).await;
    assert_eq!(termination(&more), Termination::Completed);
    assert!(!more.iter().any(|b| matches!(b, Block::ToolUseError { .. })));
    let tools: Vec<_> = up.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert!(tools.iter().any(|t| t.contains("nonexistent")));
}

#[tokio::test]
async fn standalone_query_is_single_shot_even_for_an_auto_agent() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text_then_tools(
        "Let me add. ",
        [ToolCallSpec::new("add", r#"{"a": 2, "b": 2}"#)],
    ));
    let ran = Arc::new(Mutex::new(0));
    let agent = manual(&up)
        .tool(add(&ran))
        .auto_execute_tools(true)
        .build()
        .unwrap();
    let r = query(&agent, "2 + 2?").await.unwrap();
    assert_eq!(r.text, "Let me add. ");
    assert_eq!(r.tool_uses.len(), 1);
    assert_eq!(r.termination, Termination::AwaitingToolResults);
    assert_eq!(*ran.lock().unwrap(), 0);
    assert_eq!(up.request_count(), 1);
    assert!(!r.response_id.is_empty());

    up.push(Reply::text("plain"));
    let r = query(&agent, "hi").await.unwrap();
    assert_eq!(r.text, "plain");
    assert_eq!(r.termination, Termination::Completed);
    // A fresh conversation each time.
    assert_eq!(up.requests()[1]["messages"].as_array().unwrap().len(), 1);
}

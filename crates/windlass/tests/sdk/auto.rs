//! SDK auto mode (seed 002 `auto_execute_tools=True`) against the scripted upstream.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{run, Pair};
use serde_json::{json, Value};
use windlass::sdk::{
    Agent, AgentBuilder, Block, Client, Message, Termination, Tool, ToolError, ToolErrorKind,
};
use windlass_testkit::{FakeUpstream, Reply, ToolCallSpec};

fn add() -> Tool {
    Tool::new("add", "Add two numbers", |p: Pair| async move {
        Ok::<_, ToolError>(p.a + p.b)
    })
}

fn divide() -> Tool {
    Tool::new("divide", "Divide a by b", |p: Pair| async move {
        if p.b == 0 {
            return Err(ToolError::new("Cannot divide by zero"));
        }
        Ok(p.a / p.b)
    })
}

fn auto(up: &FakeUpstream) -> AgentBuilder {
    Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .system_prompt("You are a calculator")
        .auto_execute_tools(true)
}

/// Blocks without the text deltas, which the fake upstream splits freely.
fn text_of(blocks: &[Block]) -> String {
    blocks.iter().filter_map(Block::as_text).collect()
}

fn kinds(blocks: &[Block]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for b in blocks {
        let k = match b {
            Block::Text(_) => "text",
            Block::Reasoning(_) => "reasoning",
            Block::ToolUse(_) => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::ToolUseError { .. } => "tool_use_error",
            Block::Done { .. } => "done",
            _ => "other",
        };
        if k == "text" && out.last() == Some(&"text") {
            continue;
        }
        out.push(k);
    }
    out
}

fn done(blocks: &[Block]) -> (Termination, u32, u32) {
    match blocks.last() {
        Some(Block::Done {
            termination,
            turns,
            tool_calls,
            ..
        }) => (termination.clone(), *turns, *tool_calls),
        other => panic!("last block is not Done: {other:?}"),
    }
}

/// The messages the model received in request `i`.
fn messages(up: &FakeUpstream, i: usize) -> Vec<Value> {
    up.requests()[i]["messages"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_successful_tool_runs_and_the_answer_streams() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 25, "b": 17}"#).usage(20, 5));
    up.push(Reply::text("The answer is 42").chunk_chars(3).usage(30, 6));
    let client = Client::new(auto(&up).tool(add()).build().unwrap());
    client.query("What's 25 + 17?").await.unwrap();
    let blocks = run(&client).await;

    assert_eq!(kinds(&blocks), ["tool_use", "tool_result", "text", "done"]);
    match &blocks[0] {
        Block::ToolUse(t) => {
            assert_eq!(t.name, "add");
            assert_eq!(t.input, json!({"a": 25, "b": 17}));
        }
        b => panic!("{b:?}"),
    }
    assert!(
        matches!(&blocks[1], Block::ToolResult { content, name, .. } if content == "42" && name == "add")
    );
    // Text arrives as it streams, in several deltas.
    assert!(blocks.iter().filter(|b| b.as_text().is_some()).count() > 1);
    assert_eq!(text_of(&blocks), "The answer is 42");
    let (term, turns, calls) = done(&blocks);
    assert_eq!(term, Termination::Completed);
    assert_eq!((turns, calls), (2, 1));
    if let Some(Block::Done { usage, .. }) = blocks.last() {
        assert_eq!(usage.total_tokens, 61);
    }

    // The model saw the tool, the system prompt, and the result.
    let first = &up.requests()[0];
    assert_eq!(first["tools"][0]["function"]["name"], "add");
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["required"],
        json!(["a", "b"])
    );
    let msgs = messages(&up, 1);
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[3]["content"], "42");

    let call_id = match &blocks[0] {
        Block::ToolUse(t) => t.id.clone(),
        _ => unreachable!(),
    };
    assert_eq!(
        client.history(),
        vec![
            Message::User {
                content: "What's 25 + 17?".into()
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![windlass::sdk::ToolUse {
                    id: call_id.clone(),
                    name: "add".into(),
                    input: json!({"a": 25, "b": 17}),
                }],
            },
            Message::ToolResult {
                call_id,
                name: "add".into(),
                content: "42".into(),
                is_error: false,
            },
            Message::Assistant {
                content: "The answer is 42".into(),
                tool_calls: vec![],
            },
        ]
    );
    assert_eq!(
        client.last_response().unwrap().status,
        windlass::protocol::ResponseStatus::Completed
    );
}

#[tokio::test]
async fn a_tool_error_is_yielded_and_fed_back() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("divide", r#"{"a": 10, "b": 0}"#));
    up.push(Reply::text("Cannot divide by zero"));
    let client = Client::new(auto(&up).tool(divide()).build().unwrap());
    client.query("Divide 10 by 0").await.unwrap();
    let blocks = run(&client).await;
    assert_eq!(
        kinds(&blocks),
        ["tool_use", "tool_use_error", "text", "done"]
    );
    match &blocks[1] {
        Block::ToolUseError {
            error, kind, name, ..
        } => {
            assert_eq!(*kind, ToolErrorKind::Failed);
            assert_eq!(name, "divide");
            assert!(error.contains("Cannot divide by zero"), "{error}");
        }
        b => panic!("{b:?}"),
    }
    assert_eq!(done(&blocks).0, Termination::Completed);
    let msgs = messages(&up, 1);
    let tool = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool["content"]
        .as_str()
        .unwrap()
        .contains("Cannot divide by zero"));
    let h = client.history();
    assert_eq!(h.len(), 4);
    assert!(matches!(&h[2], Message::ToolResult { is_error: true, .. }));
}

#[tokio::test]
async fn bad_arguments_are_a_tool_error_not_a_panic() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("add", r#"{"a": "one", "b": 2}"#),
        ToolCallSpec::new("add", "{not json"),
    ]));
    up.push(Reply::text("Sorry"));
    let client = Client::new(auto(&up).tool(add()).build().unwrap());
    client.query("add").await.unwrap();
    let blocks = run(&client).await;
    assert_eq!(
        kinds(&blocks),
        [
            "tool_use",
            "tool_use",
            "tool_use_error",
            "tool_use_error",
            "text",
            "done"
        ]
    );
    // A wrong type is the tool's own decoding error; text that is not a
    // JSON object is refused before the tool runs, saying so (the refusal
    // may come first).
    let errors: Vec<&str> = blocks[2..4]
        .iter()
        .map(|b| match b {
            Block::ToolUseError { error, kind, .. } => {
                assert_eq!(*kind, ToolErrorKind::Failed);
                error.as_str()
            }
            b => panic!("{b:?}"),
        })
        .collect();
    for said in ["invalid arguments", "not a valid JSON object"] {
        assert!(errors.iter().any(|e| e.contains(said)), "{errors:?}");
    }
    // Undecodable JSON is shown as the raw text.
    assert!(matches!(&blocks[1], Block::ToolUse(t) if t.input == json!("{not json")));
}

#[tokio::test]
async fn an_unknown_tool_is_yielded_and_fed_back() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("nonexistent", "{}"));
    up.push(Reply::text("Tool not found"));
    let client = Client::new(auto(&up).build().unwrap());
    client.query("Use nonexistent tool").await.unwrap();
    let blocks = run(&client).await;
    assert_eq!(
        kinds(&blocks),
        ["tool_use", "tool_use_error", "text", "done"]
    );
    match &blocks[1] {
        Block::ToolUseError { error, kind, .. } => {
            assert_eq!(*kind, ToolErrorKind::UnknownTool);
            assert_eq!(error, "Unknown tool: nonexistent");
        }
        b => panic!("{b:?}"),
    }
    let msgs = messages(&up, 1);
    let tool = msgs.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool["content"].as_str().unwrap().contains("nonexistent"));
    let h = client.history();
    assert_eq!(h.len(), 4, "{h:#?}");
    assert!(
        matches!(&h[2], Message::ToolResult { is_error: true, name, .. } if name == "nonexistent")
    );
}

#[tokio::test]
async fn max_iterations_stops_at_the_limit_and_says_so() {
    let up = FakeUpstream::start().await;
    // The model would call the tool forever.
    up.set_default(Reply::tool_call("looping", "{}"));
    for _ in 0..3 {
        up.push(Reply::tool_call("looping", "{}"));
    }
    up.push(Reply::text("Stopping now"));
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let looping = Tool::from_json("looping", "Loop", json!({"type": "object"}), move |_| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ToolError>(json!({"status": "looping"})) }
    });
    let client = Client::new(
        auto(&up)
            .tool(looping)
            .max_tool_iterations(3)
            // The plain loop: the stall stop would refuse the repeats.
            .techniques(windlass::Techniques::none())
            .build()
            .unwrap(),
    );
    client.query("Start loop").await.unwrap();
    let blocks = run(&client).await;
    let uses = blocks
        .iter()
        .filter(|b| matches!(b, Block::ToolUse(_)))
        .count();
    assert_eq!(uses, 3);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(up.request_count(), 3);
    let (term, turns, calls) = done(&blocks);
    assert_eq!(term, Termination::MaxIterations { limit: 3 });
    assert_eq!((turns, calls), (3, 3));
    // user + 3 x (assistant, result)
    assert_eq!(client.history().len(), 7);

    // The conversation can go on from there.
    client.continue_turn().await.unwrap();
    let more = run(&client).await;
    assert_eq!(text_of(&more), "Stopping now");
    assert_eq!(done(&more).0, Termination::Completed);
    assert_eq!(up.request_count(), 4);
}

#[tokio::test]
async fn the_calls_of_one_turn_run_concurrently() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_calls([
        ToolCallSpec::new("meet", "{}"),
        ToolCallSpec::new("meet", "{}"),
    ]));
    up.push(Reply::text("both met"));
    // Each call waits for the other: sequential execution would time out.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = Tool::from_json("meet", "Meet", json!({"type": "object"}), move |_| {
        let b = barrier.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(5), b.wait())
                .await
                .map(|_| "met")
                .map_err(|_| "alone")
        }
    });
    let client = Client::new(auto(&up).tool(meet).build().unwrap());
    client.query("meet twice").await.unwrap();
    let blocks = run(&client).await;
    let results: Vec<_> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["met", "met"]);
    assert_eq!(done(&blocks).0, Termination::Completed);
}

#[tokio::test]
async fn a_conversation_continues_from_the_previous_response() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("Hello Alice"));
    up.push(Reply::text("Your name is Alice"));
    let client = Client::new(auto(&up).build().unwrap());
    client.query("My name is Alice").await.unwrap();
    let first = run(&client).await;
    let first_id = client.last_response_id().unwrap();
    assert!(
        matches!(first.last(), Some(Block::Done { response_id, .. }) if *response_id == first_id)
    );
    client.query("What is my name?").await.unwrap();
    let second = run(&client).await;
    assert_eq!(text_of(&second), "Your name is Alice");
    let msgs = messages(&up, 1);
    assert_eq!(msgs.len(), 4, "{msgs:?}"); // system, user, assistant, user
    assert_eq!(msgs[2]["content"], "Hello Alice");
    assert_eq!(
        client
            .last_response()
            .unwrap()
            .previous_response_id
            .as_deref(),
        Some(first_id.as_str())
    );
    assert_eq!(client.history().len(), 4);
}

#[tokio::test]
async fn interrupt_stops_the_run() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("this never ends").stall_after(1));
    let client = Arc::new(Client::new(auto(&up).build().unwrap()));
    client.query("talk forever").await.unwrap();
    let c = client.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.interrupt();
    });
    let blocks = tokio::time::timeout(Duration::from_secs(10), run(&client))
        .await
        .expect("interrupt ends the stream");
    assert_eq!(done(&blocks).0, Termination::Interrupted);
}

#[tokio::test]
async fn an_upstream_failure_ends_the_run_failed() {
    let up = FakeUpstream::start().await;
    up.push(Reply::error(400, "model not found"));
    let client = Client::new(auto(&up).build().unwrap());
    client.query("hi").await.unwrap();
    let blocks = run(&client).await;
    match done(&blocks).0 {
        Termination::Failed { message, .. } => {
            assert!(message.contains("model not found"), "{message}")
        }
        t => panic!("{t:?}"),
    }
}

#[tokio::test]
async fn an_injected_provider_is_used() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("injected"));
    let mut cfg = windlass_providers::ChatProviderConfig::new(up.base_url());
    cfg.max_retries = 0;
    let provider = Arc::new(windlass_providers::ChatCompletionsProvider::new(cfg).unwrap());
    let agent = Agent::builder()
        .model("m")
        .provider(provider)
        .build()
        .unwrap();
    let client = Client::new(agent);
    client.query("hi").await.unwrap();
    assert_eq!(text_of(&run(&client).await), "injected");
}

#[tokio::test]
async fn a_new_query_finishes_an_unread_run_first() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::text("3"));
    up.push(Reply::text("second"));
    let client = Client::new(auto(&up).tool(add()).build().unwrap());
    client.query("first").await.unwrap();
    client.query("again").await.unwrap();
    let blocks = run(&client).await;
    assert_eq!(text_of(&blocks), "second");
    // Nothing was lost from the history.
    assert_eq!(client.history().len(), 6);
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("boom", "{}"));
    up.push(Reply::text("that tool is broken"));
    let boom = Tool::from_json("boom", "Explode", json!({"type": "object"}), |_| async {
        if true {
            panic!("kaboom");
        }
        Ok::<_, ToolError>("never")
    });
    let client = Client::new(auto(&up).tool(boom).build().unwrap());
    client.query("boom").await.unwrap();
    let blocks = run(&client).await;
    assert!(blocks.iter().any(|b| matches!(
        b,
        Block::ToolUseError { kind: ToolErrorKind::Failed, error, .. } if error.contains("panicked")
    )));
    assert_eq!(done(&blocks).0, Termination::Completed);
}

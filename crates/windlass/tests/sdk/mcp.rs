//! The SDK with an attached MCP server (a real stdio server, the fixture
//! written with the Python `mcp` package) against the scripted upstream.

use futures::StreamExt;
use windlass::sdk::{
    query, Agent, Block, BuildError, Client, McpServerConfig, Message, Termination, ToolErrorKind,
};
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_testkit::mcp::{python_stdio_command, PyMcp};
use windlass_testkit::{FakeUpstream, Reply};

fn calc_server() -> McpServerConfig {
    let (command, args) = python_stdio_command(PyMcp::V2);
    McpServerConfig {
        label: "calc".to_owned(),
        command: Some(command),
        args,
        ..McpServerConfig::default()
    }
}

fn agent(up: &FakeUpstream) -> Agent {
    Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .auto_execute_tools(true)
        .mcp_server(calc_server())
        .build()
        .unwrap()
}

#[tokio::test]
async fn mcp_tools_run_and_come_back_as_blocks() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("calc__add", r#"{"a": 17, "b": 25}"#));
    up.push(Reply::text("It is 42."));
    let client = Client::new(agent(&up));
    client.query("What is 17 + 25?").await.unwrap();
    let blocks: Vec<Block> = client.receive().collect().await;

    let tool_use = blocks.iter().find_map(|b| match b {
        Block::ToolUse(u) => Some(u.clone()),
        _ => None,
    });
    let tool_use = tool_use.expect("a ToolUse block");
    assert_eq!(tool_use.name, "calc__add");
    assert_eq!(tool_use.input["a"], 17);
    let result = blocks.iter().find_map(|b| match b {
        Block::ToolResult { id, content, .. } => Some((id.clone(), content.clone())),
        _ => None,
    });
    assert_eq!(result, Some((tool_use.id.clone(), "42".to_owned())));
    match blocks.last() {
        Some(Block::Done {
            termination,
            tool_calls,
            ..
        }) => {
            assert_eq!(*termination, Termination::Completed);
            assert_eq!(*tool_calls, 1);
        }
        other => panic!("last block: {other:?}"),
    }

    // The model saw the MCP tool under its qualified name, and the result.
    let reqs = up.requests();
    let names: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"calc__add"), "{names:?}");
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], "42");
    let history = client.history();
    assert!(history.iter().any(|m| matches!(
        m,
        Message::ToolResult { content, is_error: false, .. } if content == "42"
    )));
}

#[tokio::test]
async fn mcp_tool_errors_become_tool_use_errors() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("calc__fail", r#"{"message": "boom"}"#));
    up.push(Reply::text("That failed."));
    let client = Client::new(agent(&up));
    client.query("Fail please").await.unwrap();
    let blocks: Vec<Block> = client.receive().collect().await;
    let err = blocks.iter().find_map(|b| match b {
        Block::ToolUseError {
            name, error, kind, ..
        } => Some((name.clone(), error.clone(), *kind)),
        _ => None,
    });
    let (name, error, kind) = err.expect("a ToolUseError block");
    assert_eq!(name, "calc__fail");
    assert!(error.contains("boom"), "{error}");
    assert_eq!(kind, ToolErrorKind::Failed);
    // The model was told about the error and the run went on.
    let last = up.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(last["content"].as_str().unwrap().contains("boom"));
    assert!(matches!(
        blocks.last(),
        Some(Block::Done {
            termination: Termination::Completed,
            ..
        })
    ));
}

#[tokio::test]
async fn approval_rules_the_sdk_cannot_answer_are_refused() {
    let up = FakeUpstream::start().await;
    let server = McpServerConfig {
        require_approval: Some(McpRequireApproval::Mode(McpApprovalMode::Always)),
        ..calc_server()
    };
    let built = Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .mcp_server(server)
        .build();
    assert!(
        matches!(built, Err(BuildError::McpApproval(ref l)) if l == "calc"),
        "{built:?}"
    );
}

#[tokio::test]
async fn standalone_query_runs_no_mcp_tool() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("no tools here"));
    let result = query(&agent(&up), "hi").await.unwrap();
    assert_eq!(result.text, "no tools here");
    let tools = &up.requests()[0]["tools"];
    assert!(
        tools.as_array().is_none_or(|t| t.is_empty()),
        "query() offered tools it would run: {tools}"
    );
}

//! SDK: the tool registry and typed tools (no model involved).

use serde::Deserialize;
use serde_json::json;
use windlass::sdk::{Agent, BuildError, Tool, ToolError, ToolOutcome};

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct XY {
    x: i64,
    y: i64,
}

fn add() -> Tool {
    Tool::new("add", "Add two numbers", |args: AddArgs| async move {
        Ok::<_, ToolError>(args.a + args.b)
    })
}

fn builder() -> windlass::sdk::AgentBuilder {
    Agent::builder()
        .model("m")
        .base_url("http://127.0.0.1:9/v1")
}

#[test]
fn duplicate_tool_names_are_refused_at_build() {
    let add2 = Tool::new("add", "Add2", |a: XY| async move {
        Ok::<_, ToolError>(a.x + a.y)
    });
    let err = builder().tool(add()).tool(add2).build().unwrap_err();
    assert!(matches!(err, BuildError::DuplicateTool(ref n) if n == "add"));
    assert_eq!(err.to_string(), "Duplicate tool name: add");
}

#[test]
fn invalid_configurations_are_refused() {
    let bad = Tool::new(
        "add two",
        "x",
        |a: XY| async move { Ok::<_, ToolError>(a.x) },
    );
    assert!(matches!(
        builder().tool(bad).build(),
        Err(BuildError::InvalidToolName(_))
    ));
    assert!(matches!(
        Agent::builder().base_url("http://x/v1").build(),
        Err(BuildError::MissingModel)
    ));
    assert!(matches!(
        Agent::builder().model("m").build(),
        Err(BuildError::MissingUpstream)
    ));
    assert!(matches!(
        builder().max_tool_iterations(0).build(),
        Err(BuildError::ZeroIterations)
    ));
}

#[test]
fn defaults_follow_the_seed() {
    let agent = builder().tool(add()).build().unwrap();
    assert!(!agent.auto_execute_tools());
    assert_eq!(agent.max_tool_iterations(), 5);
    assert_eq!(agent.tools().len(), 1);
    assert!(agent.tool("add").is_some());
}

#[test]
fn the_schema_comes_from_the_argument_type() {
    let t = add();
    let p = t.parameters();
    assert_eq!(p["type"], "object");
    assert_eq!(p["required"], json!(["a", "b"]));
    assert_eq!(p["properties"]["a"]["type"], "integer");
    assert_eq!(p["properties"]["a"]["description"], "The first number.");
    assert!(p.get("$schema").is_none(), "{p}");
}

#[tokio::test]
async fn arguments_are_decoded_before_the_handler_runs() {
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = ran.clone();
    let t = Tool::new("add", "Add", move |a: AddArgs| {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move { Ok::<_, ToolError>(a.a + a.b) }
    });
    assert_eq!(t.call(&json!({"a": 2, "b": 3})).await, ToolOutcome::ok("5"));
    let bad = t.call(&json!({"a": "two"})).await;
    assert!(bad.is_error);
    assert!(bad.content.contains("invalid arguments"), "{}", bad.content);
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn handler_errors_and_results_become_outcomes() {
    let div = Tool::new("divide", "Divide", |a: XY| async move {
        if a.y == 0 {
            return Err(ToolError::new("Cannot divide by zero"));
        }
        Ok(json!({"result": a.x / a.y}))
    });
    assert_eq!(
        div.call(&json!({"x": 8, "y": 2})).await,
        ToolOutcome::ok(r#"{"result":4}"#)
    );
    let e = div.call(&json!({"x": 1, "y": 0})).await;
    assert!(e.is_error && e.content.contains("Cannot divide by zero"));

    let text = Tool::new("hello", "Greet", |_: serde_json::Value| async move {
        Ok::<_, String>("hi")
    });
    assert_eq!(text.call(&json!({})).await, ToolOutcome::ok("hi"));
    assert_eq!(text.parameters()["type"], "object");
}

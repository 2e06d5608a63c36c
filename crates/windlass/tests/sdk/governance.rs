//! The SDK with the gateway's governance gate as its policy: the same rules
//! (here scopes and a per-tool rate limit) gate SDK tools, ahead of hooks.

use std::sync::{Arc, Mutex};

use crate::support::Pair;
use futures::StreamExt;
use windlass::sdk::{Agent, Client, Hooks, Tool, ToolDecision, ToolError};
use windlass_governance::{Governance, GovernanceConfig};
use windlass_testkit::{FakeUpstream, Reply};

fn tool(name: &'static str, ran: &Arc<Mutex<Vec<String>>>) -> Tool {
    let ran = ran.clone();
    Tool::new(name, "Add two numbers", move |p: Pair| {
        ran.lock().unwrap().push(name.to_owned());
        async move { Ok::<_, ToolError>(p.a + p.b) }
    })
}

#[tokio::test]
async fn the_governance_gate_runs_before_the_hooks() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("add", r#"{"a": 1, "b": 2}"#));
    up.push(Reply::tool_call("add", r#"{"a": 3, "b": 4}"#));
    up.push(Reply::tool_call("sub", r#"{"a": 5, "b": 6}"#));
    up.push(Reply::text("done"));
    let config: GovernanceConfig =
        toml::from_str("tools = [\"add\"]\ntool_rate_limit = { per_minute = 1, burst = 1 }\n")
            .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let hooked = Arc::new(Mutex::new(Vec::new()));
    let seen = hooked.clone();
    let hooks = Hooks::new().on_pre_tool_use(move |ev| {
        seen.lock().unwrap().push(ev.tool_name.clone());
        async move { None::<ToolDecision> }
    });
    let agent = Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .auto_execute_tools(true)
        .tool(tool("add", &ran))
        .tool(tool("sub", &ran))
        .hooks(hooks)
        .policy(Arc::new(Governance::new(config).unwrap()))
        .build()
        .unwrap();
    let client = Client::new(agent);
    client.query("add things").await.unwrap();
    let _: Vec<_> = client.receive().collect().await;
    assert_eq!(*ran.lock().unwrap(), ["add"], "only the first add runs");
    assert_eq!(
        *hooked.lock().unwrap(),
        ["add"],
        "refused calls never reach the hooks"
    );
    assert_eq!(up.tool_messages(1), ["3"]);
    assert!(
        up.tool_messages(2)[1].contains("rate limit"),
        "{:?}",
        up.tool_messages(2)
    );
    assert!(
        up.tool_messages(3)[2].contains("may not use"),
        "{:?}",
        up.tool_messages(3)
    );
}

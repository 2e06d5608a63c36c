//! The policy sees each call once (seed 004 rate limits count calls): a
//! server call paused with a mixed turn meets `before_call` when it runs on
//! continuation, not also when the turn paused.

use std::sync::{Arc, Mutex};

use serde_json::json;
use windlass_engine::{CallDecision, Policy, PolicyContext, ToolCall, ToolDefinition};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply, ToolCallSpec};

#[derive(Default)]
struct Counting(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl Policy for Counting {
    async fn before_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(call.call_id.clone());
        CallDecision::Allow
    }
}

#[tokio::test]
async fn paused_server_call_meets_the_policy_once() {
    for mode in MODES {
        let policy = Arc::new(Counting::default());
        let mock = MockExecutor::new().tool("lookup", MockBehavior::Ok("found".into()));
        let gw = Gateway::start_with(GatewayOptions {
            executors: vec![mock.arc()],
            policy: Some(policy.clone()),
            ..GatewayOptions::requires_action()
        })
        .await;
        let tools = funcs(&["lookup", "ask_user"]);
        gw.upstream.push(Reply::tool_calls(vec![
            ToolCallSpec::new("lookup", "{}").id("call_s"),
            ToolCallSpec::new("ask_user", "{}").id("call_c"),
        ]));
        let parent = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "look up and ask", "tools": tools}),
        )
        .await;
        assert_eq!(parent.status(), "requires_action", "{mode:?}");
        // Only the client call was decided: the server call did not run.
        assert_eq!(*policy.0.lock().unwrap(), ["call_c"], "{mode:?}");

        gw.upstream.push(Reply::text("done"));
        let run = create(
            &gw,
            mode,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [{"type": "function_call_output", "call_id": "call_c", "output": "yes"}],
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(mock.calls().len(), 1, "{mode:?}");
        assert_eq!(
            *policy.0.lock().unwrap(),
            ["call_c", "call_s"],
            "{mode:?}: each call decided once"
        );
    }
}

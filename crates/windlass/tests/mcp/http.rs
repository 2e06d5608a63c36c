//! MCP over streamable HTTP against real servers (our fixture on the Python
//! SDK 2.x and 1.x, npm server-everything): `mcp_list_tools` before the
//! first turn, `label__tool` names upstream, `mcp_call` items and their
//! events, and the plain call + tool message the next turn sees. JSON and SSE.

use crate::support::*;
use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{McpFixture, PyMcp, Reply, ToolCallSpec};

/// The full add round trip on one fixture, in one mode.
async fn add_round_trip(fx: &McpFixture, mode: Mode, tag: &str) {
    let gw = start(loopback_config()).await;
    gw.upstream
        .push(Reply::tool_call("calc__add", r#"{"a":2,"b":3}"#));
    gw.upstream.push(Reply::text("The sum is 5."));
    let run = create(
        &gw,
        mode,
        &json!({"model": "m", "input": "2+3?", "tools": [mcp_tool("calc", &fx.url)]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
    assert_eq!(
        output_types(&run.resp),
        ["mcp_list_tools", "mcp_call", "message"],
        "{tag}"
    );

    // The listing: every fixture tool with its schema and description.
    let list = only(&run.resp, "mcp_list_tools");
    assert_eq!(list["server_label"], "calc", "{tag}");
    assert!(list["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        list.get("error").is_none_or(Value::is_null),
        "{tag}: {list}"
    );
    let mut names = listed_names(&list);
    names.sort();
    let mut want: Vec<String> = FIXTURE_TOOLS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "{tag}");
    let add = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap();
    assert_eq!(add["description"], "Add two integers", "{tag}");
    assert_eq!(add["input_schema"]["type"], "object", "{tag}: {add}");
    assert!(add["input_schema"]["properties"]["a"].is_object(), "{tag}");
    assert!(add["input_schema"]["properties"]["b"].is_object(), "{tag}");

    // The call.
    let call = only(&run.resp, "mcp_call");
    let call_id = call["id"].as_str().unwrap().to_owned();
    assert!(call_id.starts_with("mcp_"), "{tag}: {call}");
    assert_eq!(call["server_label"], "calc");
    assert_eq!(call["name"], "add");
    assert_eq!(call["arguments"], r#"{"a":2,"b":3}"#);
    assert_eq!(call["output"], "5", "{tag}: {call}");
    assert_eq!(call["status"], "completed");
    assert!(call["error"].is_null(), "{tag}: {call}");
    assert_eq!(final_text(&run.resp), "The sum is 5.");

    // The adapter listed once and called once, with the model's arguments.
    assert_eq!(gw.hub.lists(), ["calc"], "{tag}");
    assert_eq!(
        gw.hub.calls(),
        [("calc".into(), "add".into(), r#"{"a":2,"b":3}"#.into())],
        "{tag}"
    );

    // Upstream: prefixed tool names; then a plain call + tool message.
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 2, "{tag}");
    let mut tools = upstream_tool_names(&reqs[0]);
    tools.sort();
    let mut want: Vec<String> = FIXTURE_TOOLS.iter().map(|t| format!("calc__{t}")).collect();
    want.sort();
    assert_eq!(tools, want, "{tag}");
    assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"], "{tag}");
    assert_eq!(
        assistant_calls(&reqs[1]),
        [(
            call_id.clone(),
            "calc__add".into(),
            r#"{"a":2,"b":3}"#.into()
        )],
        "{tag}"
    );
    assert_eq!(tool_messages(&reqs[1]), [(call_id.clone(), "5".into())]);
    let raw = reqs[1].to_string();
    assert!(!raw.contains("mcp_list_tools") && !raw.contains("\"mcp_call\""));

    if let Some(cap) = &run.sse {
        assert_eq!(terminal(cap), "response.completed");
        assert_eq!(
            mcp_trace(cap),
            [
                "added:mcp_list_tools",
                "mcp_list_tools.in_progress",
                "mcp_list_tools.completed",
                "done:mcp_list_tools",
                "added:mcp_call",
                "mcp_call_arguments.delta",
                "mcp_call_arguments.done",
                "mcp_call.in_progress",
                "mcp_call.completed",
                "done:mcp_call",
            ],
            "{tag}"
        );
        check_mcp_call_events(cap, &call_id);
        // The added item is in progress, with the arguments still empty.
        let added = cap
            .of_type("response.output_item.added")
            .into_iter()
            .find(|d| d["item"]["type"] == "mcp_call")
            .unwrap()
            .clone();
        assert_eq!(added["item"]["status"], "in_progress", "{added}");
        assert_eq!(added["item"]["id"], call_id.as_str());
    }
}

#[tokio::test]
async fn list_and_call_python_sdk_v2() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        add_round_trip(&fx, mode, &format!("v2 {mode:?}")).await;
    }
}

#[tokio::test]
async fn list_and_call_python_sdk_v1() {
    let fx = McpFixture::python(PyMcp::V1).await;
    for mode in MODES {
        add_round_trip(&fx, mode, &format!("v1 {mode:?}")).await;
    }
}

/// Stateless servers answering plain JSON work the same.
#[tokio::test]
async fn list_and_call_stateless_json_server() {
    let fx = McpFixture::python_with(PyMcp::V2, &["--stateless", "--json"]).await;
    add_round_trip(&fx, Mode::Json, "v2 stateless json").await;
}

/// A paginated `tools/list` is followed to its last page.
#[tokio::test]
async fn paginated_listing_gets_every_tool() {
    for v in [PyMcp::V2, PyMcp::V1] {
        let fx = McpFixture::python_with(v, &["--page-size", "2"]).await;
        let gw = start(loopback_config()).await;
        gw.upstream.push(Reply::text("ok"));
        let run = create(
            &gw,
            Mode::Json,
            &json!({"model": "m", "input": "hi", "tools": [mcp_tool("calc", &fx.url)]}),
        )
        .await;
        let mut names = listed_names(&only(&run.resp, "mcp_list_tools"));
        names.sort();
        let mut want: Vec<String> = FIXTURE_TOOLS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(names, want, "{v:?}");
        assert_eq!(
            upstream_tool_names(&gw.upstream.requests()[0]).len(),
            FIXTURE_TOOLS.len(),
            "{v:?}"
        );
    }
}

/// Two declared servers are listed at the same time: each server answers
/// `tools/list` only once both have been asked (a rendezvous folder), so a
/// gateway that lists them one after another gets an error (424) instead.
/// Items and events still come in declaration order.
#[tokio::test]
async fn declared_servers_are_listed_concurrently() {
    let dir = std::env::temp_dir().join(format!(
        "windlass-rendezvous-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let flags = [
        "--list-rendezvous",
        dir.to_str().unwrap(),
        "--list-peers",
        "2",
    ];
    let a = McpFixture::python_with(PyMcp::V2, &flags).await;
    let b = McpFixture::python_with(PyMcp::V2, &flags).await;
    let gw = start(loopback_config()).await;
    gw.upstream.push(Reply::text("ok"));
    let body = json!({"model": "m", "input": "hi", "stream": true,
                      "tools": [mcp_tool("first", &a.url), mcp_tool("second", &b.url)]});
    let run = create(&gw, Mode::Sse, &body).await;
    assert_eq!(run.resp["status"], "completed", "{}", run.resp);
    let output = run.resp["output"].as_array().unwrap();
    let labels: Vec<&str> = output
        .iter()
        .filter(|i| i["type"] == "mcp_list_tools")
        .map(|i| i["server_label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["first", "second"]);
    for item in output.iter().filter(|i| i["type"] == "mcp_list_tools") {
        assert!(item["error"].is_null(), "{item}");
        assert_eq!(listed_names(item).len(), FIXTURE_TOOLS.len(), "{item}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// server-everything: its tool list (echo, get-sum, ...) and two calls in
/// one turn, results in the model's order.
#[tokio::test]
async fn server_everything_list_and_two_calls_in_one_turn() {
    let fx = McpFixture::everything().await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        gw.upstream.push(Reply::tool_calls([
            ToolCallSpec::new("ev__get-sum", r#"{"a":2,"b":3}"#),
            ToolCallSpec::new("ev__echo", r#"{"message":"hi"}"#),
        ]));
        gw.upstream.push(Reply::text("done"));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "go", "tools": [mcp_tool("ev", &fx.url)]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let list = only(&run.resp, "mcp_list_tools");
        let names = listed_names(&list);
        for t in ["echo", "get-sum", "get-tiny-image"] {
            assert!(names.iter().any(|n| n == t), "{mode:?}: {t} in {names:?}");
        }
        let echo = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "echo")
            .unwrap();
        assert!(
            echo["input_schema"]["properties"]["message"].is_object(),
            "{echo}"
        );
        assert_eq!(echo["description"], "Echoes back the input string");
        assert!(upstream_tool_names(&gw.upstream.requests()[0])
            .iter()
            .any(|n| n == "ev__get-sum"));

        assert_eq!(
            output_types(&run.resp),
            ["mcp_list_tools", "mcp_call", "mcp_call", "message"],
            "{mode:?}"
        );
        let calls = outputs_of(&run.resp, "mcp_call");
        assert_eq!(calls[0]["name"], "get-sum");
        assert_eq!(calls[0]["output"], "The sum of 2 and 3 is 5.");
        assert_eq!(calls[1]["name"], "echo");
        assert_eq!(calls[1]["output"], "Echo: hi");
        assert_ne!(calls[0]["id"], calls[1]["id"]);
        let tm = tool_messages(&gw.upstream.requests()[1]);
        assert_eq!(
            tm,
            [
                (
                    calls[0]["id"].as_str().unwrap().to_owned(),
                    "The sum of 2 and 3 is 5.".to_owned()
                ),
                (
                    calls[1]["id"].as_str().unwrap().to_owned(),
                    "Echo: hi".to_owned()
                ),
            ],
            "{mode:?}"
        );
        if let Some(cap) = &run.sse {
            for c in &calls {
                check_mcp_call_events(cap, c["id"].as_str().unwrap());
            }
            let trace = mcp_trace(cap);
            assert_eq!(
                trace.iter().filter(|t| *t == "mcp_call.completed").count(),
                2,
                "{trace:?}"
            );
        }
    }
}

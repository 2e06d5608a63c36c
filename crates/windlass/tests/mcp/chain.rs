//! MCP across a `previous_response_id` chain and in what the model sees:
//! one listing per label per chain, a mixed turn (MCP call + client
//! function call) paused whole and resumed MCP-first, and rich tool
//! results (several text parts, an image, structured content) reaching the
//! upstream tool message without loss.

use crate::support::*;
use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{McpFixture, PyMcp, Reply, ToolCallSpec};

/// The PNG `multi()` returns.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=";

/// Three responses re-declaring the same server: only the first lists it;
/// the later ones still offer its tools (reused list) and call them; the
/// upstream transcript holds each earlier call as a plain call + tool
/// message. A new label later in the chain is listed, alone.
#[tokio::test]
async fn chain_of_three_lists_once() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for mode in MODES {
        let gw = start(loopback_config()).await;
        let tools = json!([mcp_tool("calc", &fx.url)]);
        let mut prev: Option<String> = None;
        let mut ids = Vec::new();
        for (i, (a, b)) in [(1, 2), (3, 4), (5, 6)].into_iter().enumerate() {
            gw.upstream.push(Reply::tool_call(
                "calc__add",
                format!(r#"{{"a":{a},"b":{b}}}"#),
            ));
            gw.upstream.push(Reply::text(format!("sum {}", a + b)));
            let mut body = json!({"model": "m", "input": format!("add {a} {b}"), "tools": tools});
            if let Some(p) = &prev {
                body["previous_response_id"] = json!(p);
            }
            let run = create(&gw, mode, &body).await;
            assert_eq!(run.status(), "completed", "{mode:?} #{i}: {}", run.resp);
            let want: &[&str] = if i == 0 {
                &["mcp_list_tools", "mcp_call", "message"]
            } else {
                &["mcp_call", "message"]
            };
            assert_eq!(output_types(&run.resp), want, "{mode:?} #{i}");
            let call = only(&run.resp, "mcp_call");
            assert_eq!(call["output"], (a + b).to_string(), "{mode:?} #{i}");
            ids.push(call["id"].as_str().unwrap().to_owned());
            if let Some(cap) = &run.sse {
                let trace = mcp_trace(cap);
                assert_eq!(
                    trace.iter().any(|t| t.contains("mcp_list_tools")),
                    i == 0,
                    "{mode:?} #{i}: {trace:?}"
                );
            }
            prev = Some(run.id());
        }
        assert_eq!(gw.hub.lists(), ["calc"], "{mode:?}: listed once per chain");
        assert_eq!(gw.hub.calls().len(), 3);

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 6);
        for (i, r) in reqs.iter().enumerate() {
            assert_eq!(
                upstream_tool_names(r).len(),
                FIXTURE_TOOLS.len(),
                "{mode:?}: request {i} offers the reused tools"
            );
        }
        // The last request carries the whole chain, MCP calls as plain calls.
        let last = &reqs[5];
        assert_eq!(
            roles(last),
            [
                "user",
                "assistant",
                "tool",
                "assistant",
                "user",
                "assistant",
                "tool",
                "assistant",
                "user",
                "assistant",
                "tool"
            ],
            "{mode:?}"
        );
        let tm = tool_messages(last);
        let want: Vec<(String, String)> = ids
            .iter()
            .zip(["3", "7", "11"])
            .map(|(id, o)| (id.clone(), o.to_owned()))
            .collect();
        assert_eq!(tm, want, "{mode:?}");
        assert!(assistant_calls(last).iter().all(|c| c.1 == "calc__add"));
        let raw = last.to_string();
        assert!(!raw.contains("mcp_list_tools") && !raw.contains("mcpl_"));

        // A fourth response adding a second label lists only that one.
        gw.upstream.push(Reply::text("ok"));
        let run = create(
            &gw,
            Mode::Json,
            &json!({"model": "m", "input": "more", "previous_response_id": prev,
                    "tools": [mcp_tool("calc", &fx.url), mcp_tool("calc2", &fx.url)]}),
        )
        .await;
        assert_eq!(output_types(&run.resp), ["mcp_list_tools", "message"]);
        assert_eq!(only(&run.resp, "mcp_list_tools")["server_label"], "calc2");
        assert_eq!(gw.hub.lists(), ["calc", "calc2"], "{mode:?}");
        assert_eq!(
            upstream_tool_names(&gw.upstream.requests()[6]).len(),
            2 * FIXTURE_TOOLS.len()
        );
    }
}

/// Mixed turn: an MCP call (no approval needed) and a client function call.
/// The response pauses whole: the `mcp_call` stays `in_progress` with no
/// output and the server is not called. The continuation with the client's
/// output runs the paused call first (same id, output in the continuation),
/// then the model sees both results.
#[tokio::test]
async fn mixed_turn_pauses_and_resumes_mcp_call_first() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for (first, second) in [(Mode::Json, Mode::Json), (Mode::Sse, Mode::Sse)] {
        let tag = format!("{first:?}->{second:?}");
        let gw = start(loopback_config()).await;
        let tools = json!([mcp_tool("calc", &fx.url), func("ask_user")]);
        gw.upstream.push(Reply::tool_calls([
            ToolCallSpec::new("calc__add", r#"{"a":20,"b":22}"#),
            ToolCallSpec::new("ask_user", r#"{"q":"ok?"}"#).id("call_c"),
        ]));
        let parent = create(
            &gw,
            first,
            &json!({"model": "m", "input": "x", "tools": tools}),
        )
        .await;
        assert_eq!(parent.status(), "requires_action", "{tag}: {}", parent.resp);
        assert_eq!(
            output_types(&parent.resp),
            ["mcp_list_tools", "mcp_call", "function_call"],
            "{tag}"
        );
        let paused = only(&parent.resp, "mcp_call");
        assert_eq!(paused["status"], "in_progress", "{tag}: {paused}");
        assert!(paused["output"].is_null() && paused["error"].is_null());
        assert!(gw.hub.calls().is_empty(), "{tag}: ran in a paused turn");
        if let Some(cap) = &parent.sse {
            let trace = mcp_trace(cap);
            assert!(
                !trace.iter().any(|t| t.starts_with("mcp_call.")),
                "{tag}: a paused call neither starts nor ends: {trace:?}"
            );
            assert_eq!(trace.last().unwrap(), "done:mcp_call");
        }
        let mcp_id = paused["id"].as_str().unwrap().to_owned();

        gw.upstream.push(Reply::text("42, and you said yes"));
        let run = create(
            &gw,
            second,
            &json!({
                "model": "m",
                "previous_response_id": parent.id(),
                "input": [{"type": "function_call_output", "call_id": "call_c", "output": "yes"}],
                "tools": tools,
            }),
        )
        .await;
        assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["mcp_call", "message"], "{tag}");
        let done = only(&run.resp, "mcp_call");
        assert_eq!(done["id"], mcp_id.as_str(), "{tag}: same call id");
        assert_eq!(done["output"], "42", "{tag}: {done}");
        assert_eq!(done["status"], "completed");
        assert_eq!(gw.hub.calls().len(), 1);
        assert_eq!(gw.hub.lists().len(), 1);
        // Both versions of the call are kept: the parent still shows it paused.
        assert_stored_equals(&gw, &parent.resp).await;
        assert_stored_equals(&gw, &run.resp).await;

        let reqs = gw.upstream.requests();
        assert_eq!(reqs.len(), 2);
        let calls: Vec<String> = assistant_calls(&reqs[1]).into_iter().map(|c| c.0).collect();
        assert_eq!(calls, [mcp_id.clone(), "call_c".into()], "{tag}");
        let mut tm = tool_messages(&reqs[1]);
        tm.sort();
        let mut want = vec![
            (mcp_id.clone(), "42".to_owned()),
            ("call_c".into(), "yes".into()),
        ];
        want.sort();
        assert_eq!(tm, want, "{tag}: each result exactly once");
        if let Some(cap) = &run.sse {
            assert_eq!(
                mcp_trace(cap),
                [
                    "added:mcp_call",
                    "mcp_call.in_progress",
                    "mcp_call.completed",
                    "done:mcp_call"
                ],
                "{tag}"
            );
        }
        // A further continuation does not run it again.
        gw.upstream.push(Reply::text("still 42"));
        let next = create(
            &gw,
            Mode::Json,
            &json!({"model": "m", "previous_response_id": run.id(), "input": "again?", "tools": tools}),
        )
        .await;
        assert_eq!(output_types(&next.resp), ["message"], "{tag}");
        assert_eq!(gw.hub.calls().len(), 1, "{tag}: resumed call ran twice");
        let tm = tool_messages(&gw.upstream.requests()[2]);
        assert_eq!(tm.len(), 2, "{tag}: {tm:?}");
        assert!(
            tm.contains(&(mcp_id.clone(), "42".to_owned())),
            "{tag}: {tm:?}"
        );
        assert_stored_equals(&gw, &parent.resp).await;
    }
}

/// `multi()` returns two text parts, an image and structured content: the
/// `mcp_call` output and the upstream tool message carry all of them.
#[tokio::test]
async fn rich_content_reaches_the_upstream_without_loss() {
    for v in [PyMcp::V2, PyMcp::V1] {
        let fx = McpFixture::python(v).await;
        for mode in MODES {
            let tag = format!("{v:?} {mode:?}");
            let gw = start(loopback_config()).await;
            gw.upstream.push(Reply::tool_calls([
                ToolCallSpec::new("calc__multi", "{}"),
                ToolCallSpec::new("calc__weather", r#"{"city":"Oslo"}"#),
            ]));
            gw.upstream.push(Reply::text("ok"));
            let run = create(
                &gw,
                mode,
                &json!({"model": "m", "input": "x", "tools": [mcp_tool("calc", &fx.url)]}),
            )
            .await;
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            let calls = outputs_of(&run.resp, "mcp_call");
            let multi = calls[0]["output"].as_str().unwrap_or_default().to_owned();
            let tm = tool_messages(&gw.upstream.requests()[1]);
            assert_eq!(tm.len(), 2, "{tag}");
            assert_eq!(tm[0].1, multi, "{tag}: model sees what the client sees");
            let first = multi.find("first part");
            let second = multi.find("second part");
            assert!(
                first.is_some() && second.is_some() && first < second,
                "{tag}: {multi}"
            );
            assert!(
                multi.contains(&format!("data:image/png;base64,{PNG}")),
                "{tag}: image lost: {multi}"
            );
            let structured_kept = multi
                .lines()
                .any(|l| serde_json::from_str::<Value>(l).ok() == Some(json!({"total": 3})));
            assert!(structured_kept, "{tag}: structured content lost: {multi}");

            let weather = calls[1]["output"].as_str().unwrap_or_default();
            assert!(
                weather.contains("Oslo") && weather.contains("21.5") && weather.contains("sunny"),
                "{tag}: {weather}"
            );
            assert_eq!(tm[1].1, weather, "{tag}");
        }
    }
}

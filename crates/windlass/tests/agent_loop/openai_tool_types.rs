//! OpenAI's client-executed tool types (`local_shell`, `shell`,
//! `apply_patch`, `computer_use_preview`) through the gateway, as JSON and
//! as SSE: the model sees a function named after the type, the client gets
//! the type's own item, and its `*_output` item (or a plain
//! `function_call_output`, as Codex answers `local_shell_call`) continues
//! the response.

use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

fn upstream_tool<'a>(req: &'a Value, name: &str) -> &'a Value {
    req["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("no upstream tool {name}: {req}"))
}

/// One call of the type comes back as its own item; the response pauses
/// like a function call and the stream announces the item whole.
async fn paused_call(gw: &Gateway, mode: Mode, tool: Value, name: &str, args: &str) -> Run {
    gw.upstream
        .push(Reply::tool_call(name, args).with_call_id("call_t"));
    let run = create(
        gw,
        mode,
        &json!({"model": "m", "input": "go", "tools": [tool]}),
    )
    .await;
    assert_eq!(run.status(), "requires_action", "{mode:?}: {}", run.resp);
    if let Some(cap) = &run.sse {
        assert_eq!(terminal(cap), "response.requires_action");
        let kind = output_types(&run.resp)[0].clone();
        assert_eq!(
            item_events(cap),
            [format!("added:{kind}"), format!("done:{kind}")]
        );
        assert!(
            !cap.types()
                .iter()
                .any(|t| t.contains("function_call_arguments")),
            "a typed call is not streamed as a function call: {:?}",
            cap.types()
        );
    }
    run
}

#[tokio::test]
async fn local_shell_call_and_output_round_trip() {
    for first in MODES {
        for second in MODES {
            let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
            let args = r#"{"command":["ls","-la"],"workdir":"/srv","timeout_ms":3000}"#;
            let parent = paused_call(
                &gw,
                first,
                json!({"type": "local_shell"}),
                "local_shell",
                args,
            )
            .await;
            let reqs = gw.upstream.requests();
            let def = upstream_tool(&reqs[0], "local_shell");
            assert_eq!(
                def["function"]["parameters"]["required"],
                json!(["command"])
            );

            assert_eq!(output_types(&parent.resp), ["local_shell_call"]);
            let call = &output(&parent.resp)[0];
            assert_eq!(call["call_id"], "call_t");
            assert_eq!(call["status"], "completed");
            assert!(call["id"].as_str().unwrap().starts_with("lsh_"));
            assert_eq!(
                call["action"],
                json!({"type": "exec", "command": ["ls", "-la"], "env": {},
                       "working_directory": "/srv", "timeout_ms": 3000})
            );

            gw.upstream.push(Reply::text("Two files."));
            let out = json!({"type": "local_shell_call_output", "id": "call_t",
                             "output": "{\"output\":\"a\\nb\\n\",\"exit_code\":0}"});
            let run = create(
                &gw,
                second,
                &json!({"model": "m", "previous_response_id": parent.id(),
                        "input": [out], "tools": [{"type": "local_shell"}]}),
            )
            .await;
            let tag = format!("{first:?}->{second:?}");
            assert_eq!(run.status(), "completed", "{tag}: {}", run.resp);
            assert_eq!(final_text(&run.resp), "Two files.");
            let reqs = gw.upstream.requests();
            let calls = assistant_calls(&reqs[1]);
            assert_eq!(calls.len(), 1, "{tag}");
            assert_eq!(
                (calls[0].0.as_str(), calls[0].1.as_str()),
                ("call_t", "local_shell")
            );
            let sent: Value = serde_json::from_str(&calls[0].2).unwrap();
            assert_eq!(
                sent,
                json!({"command": ["ls", "-la"], "workdir": "/srv", "timeout_ms": 3000})
            );
            assert_eq!(
                tool_messages(&reqs[1]),
                [(
                    "call_t".into(),
                    "{\"output\":\"a\\nb\\n\",\"exit_code\":0}".into()
                )],
                "{tag}"
            );
        }
    }
}

/// Codex's way: the whole history as input (no `previous_response_id`),
/// the call item as it came back, answered by a `function_call_output`.
#[tokio::test]
async fn a_local_shell_call_is_answered_by_a_function_call_output_in_full_input() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let parent = paused_call(
            &gw,
            mode,
            json!({"type": "local_shell"}),
            "local_shell",
            r#"{"command":["pwd"]}"#,
        )
        .await;
        let call = output(&parent.resp)[0].clone();
        gw.upstream.push(Reply::text("In /srv."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "tools": [{"type": "local_shell"}], "input": [
                {"role": "user", "content": "go"},
                call,
                {"type": "function_call_output", "call_id": "call_t", "output": "/srv\n"},
            ]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        let reqs = gw.upstream.requests();
        assert_eq!(roles(&reqs[1]), ["user", "assistant", "tool"]);
        assert_eq!(assistant_calls(&reqs[1])[0].1, "local_shell");
        assert_eq!(
            tool_messages(&reqs[1]),
            [("call_t".into(), "/srv\n".into())]
        );
    }
}

#[tokio::test]
async fn shell_call_output_reaches_the_model_per_command() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let parent = paused_call(
            &gw,
            mode,
            json!({"type": "shell"}),
            "shell",
            r#"{"commands":["echo hi","false"],"timeout_ms":1000}"#,
        )
        .await;
        assert_eq!(output_types(&parent.resp), ["shell_call"]);
        let call = &output(&parent.resp)[0];
        assert_eq!(call["action"]["commands"], json!(["echo hi", "false"]));
        assert_eq!(call["action"]["timeout_ms"], 1000);

        gw.upstream.push(Reply::text("ok"));
        let out = json!({"type": "shell_call_output", "call_id": "call_t", "output": [
            {"stdout": "hi\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
            {"stdout": "", "stderr": "", "outcome": {"type": "exit", "exit_code": 1}}
        ]});
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "previous_response_id": parent.id(), "input": [out],
                    "tools": [{"type": "shell"}]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{}", run.resp);
        let reqs = gw.upstream.requests();
        assert_eq!(
            tool_messages(&reqs[1]),
            [(
                "call_t".into(),
                "[command 1] exit code 0\nstdout:\nhi\n\n[command 2] exit code 1\n".into()
            )]
        );
    }
}

#[tokio::test]
async fn apply_patch_call_and_a_failed_output() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let parent = paused_call(
            &gw,
            mode,
            json!({"type": "apply_patch"}),
            "apply_patch",
            r#"{"type":"update_file","path":"src/lib.rs","diff":"@@\n-old\n+new\n"}"#,
        )
        .await;
        assert_eq!(output_types(&parent.resp), ["apply_patch_call"]);
        let call = &output(&parent.resp)[0];
        assert_eq!(
            call["operation"],
            json!({"type": "update_file", "path": "src/lib.rs", "diff": "@@\n-old\n+new\n"})
        );
        assert_eq!(call["status"], "completed");

        gw.upstream.push(Reply::text("I will look again."));
        let out = json!({"type": "apply_patch_call_output", "call_id": "call_t",
                         "status": "failed", "output": "context not found"});
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "previous_response_id": parent.id(), "input": [out],
                    "tools": [{"type": "apply_patch"}]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{}", run.resp);
        let reqs = gw.upstream.requests();
        assert_eq!(
            tool_messages(&reqs[1]),
            [("call_t".into(), "Error: context not found".into())]
        );
    }
}

/// The call comes back as a `computer_call`; its screenshot cannot be
/// carried to a chat-completions upstream in a tool result, so the
/// continuation is refused up front with a clear 400.
#[tokio::test]
async fn computer_call_and_a_screenshot_this_upstream_cannot_take() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let tool = json!({"type": "computer_use_preview", "display_width": 1280,
                          "display_height": 800, "environment": "browser"});
        let parent = paused_call(
            &gw,
            mode,
            tool.clone(),
            "computer_use_preview",
            r#"{"action":{"type":"click","x":5,"y":7,"button":"left"}}"#,
        )
        .await;
        let reqs = gw.upstream.requests();
        let def = upstream_tool(&reqs[0], "computer_use_preview");
        assert!(def["function"]["description"]
            .as_str()
            .unwrap()
            .contains("1280x800"));
        assert_eq!(output_types(&parent.resp), ["computer_call"]);
        let call = &output(&parent.resp)[0];
        assert_eq!(
            call["action"],
            json!({"type": "click", "x": 5, "y": 7, "button": "left"})
        );
        assert_eq!(call["pending_safety_checks"], json!([]));

        let out = json!({"type": "computer_call_output", "call_id": "call_t",
                         "output": {"type": "computer_screenshot",
                                    "image_url": "data:image/png;base64,iVBORw0KGgo="}});
        let (status, err) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "previous_response_id": parent.id(),
                        "input": [out], "tools": [tool]}),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["code"], "unsupported_for_upstream");
        assert_eq!(gw.upstream.request_count(), 1);
    }
}

/// Arguments that make no valid item: the call goes back as a plain
/// function call named after the type, with the model's arguments.
#[tokio::test]
async fn arguments_that_make_no_item_come_back_as_a_function_call() {
    for mode in MODES {
        let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
        let run = paused_call(
            &gw,
            mode,
            json!({"type": "local_shell"}),
            "local_shell",
            r#"{"cmd":"ls"}"#,
        )
        .await;
        assert_eq!(output_types(&run.resp), ["function_call"]);
        let call = &output(&run.resp)[0];
        assert_eq!(call["name"], "local_shell");
        assert_eq!(call["arguments"], r#"{"cmd":"ls"}"#);
        assert_eq!(call["call_id"], "call_t");
        assert!(call["id"].as_str().unwrap().starts_with("fc_"));
    }
}

#[tokio::test]
async fn refused_tools_and_outputs_name_the_field() {
    let gw = Gateway::start_with(GatewayOptions::requires_action()).await;
    let cases = [
        (
            json!({"model": "m", "input": "draw", "tools": [
                {"type": "function", "name": "f"}, {"type": "image_generation"}]}),
            "tools[1].type",
            "unsupported_tool_type",
        ),
        (
            json!({"model": "m", "input": "x", "tools": [
                {"type": "shell", "environment": {"type": "container_auto"}}]}),
            "tools[0].environment",
            "unsupported_tool_type",
        ),
        (
            json!({"model": "m", "input": "x", "tools": [
                {"type": "local_shell"}, {"type": "function", "name": "local_shell"}]}),
            "tools[1].name",
            "",
        ),
        (
            json!({"model": "m", "tools": [{"type": "local_shell"}], "input": [
                {"type": "local_shell_call_output", "id": "call_nope", "output": "{}"}]}),
            "input[0].call_id",
            "unknown_call_id",
        ),
    ];
    for (body, param, code) in cases {
        let (status, err) = gw.post_json("/v1/responses", &body).await;
        assert_eq!(status, 400, "{body}: {err}");
        assert_eq!(err["error"]["param"], param, "{err}");
        if !code.is_empty() {
            assert_eq!(err["error"]["code"], code, "{err}");
        }
    }
    assert_eq!(gw.upstream.request_count(), 0);
}

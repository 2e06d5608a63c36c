//! The built-in tools through the gateway, behind the governance gate: a
//! request opts in with `{"type": "mcp", "server_label": "windlass"}`; the
//! calls become `mcp_call` items; refusals (read-only, rate limits) are
//! error outputs the model reads and the response still completes.

use std::path::{Path, PathBuf};

use serde_json::json;
use windlass_cli::govern::govern;
use windlass_governance::GovernanceConfig;
use windlass_testkit::check::only;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};
use windlass_tools::builtins::BuiltinsConfig;
use windlass_tools::{McpConfig, McpServers};

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "windlass-gw-builtins-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn gateway(work: &Path, governance: &str) -> Gateway {
    let builtins: BuiltinsConfig = toml::from_str(&format!(
        "enabled = [\"shell\", \"read_file\", \"write_file\", \"list_dir\"]\nwork_dir = {:?}\n",
        work.display().to_string()
    ))
    .unwrap();
    let governance: GovernanceConfig = toml::from_str(governance).unwrap();
    let governed = govern(
        builtins,
        governance,
        McpServers::start(McpConfig::default()),
        None,
    )
    .await
    .unwrap();
    Gateway::start_with(GatewayOptions {
        mcp: Some(governed.hub),
        policy: Some(governed.policy),
        ..Default::default()
    })
    .await
}

fn builtins_tool() -> serde_json::Value {
    json!({"type": "mcp", "server_label": "windlass"})
}

#[tokio::test]
async fn shell_and_a_file_tool_run_in_one_response() {
    let work = work_dir("both");
    std::fs::write(work.join("README.md"), "one\ntwo\nthree\n").unwrap();
    let gw = gateway(&work, "commands = [\"wc\", \"cat\"]").await;
    for mode in MODES {
        gw.upstream.clear_requests();
        gw.upstream.push(Reply::tool_call(
            "windlass__shell",
            r#"{"command":"wc -l README.md"}"#,
        ));
        gw.upstream.push(Reply::tool_call(
            "windlass__write_file",
            r#"{"path":"count.txt","content":"3 lines\n"}"#,
        ));
        gw.upstream.push(Reply::text("README.md has 3 lines."));
        let run = create(
            &gw,
            mode,
            &json!({"model": "m", "input": "count", "tools": [builtins_tool()]}),
        )
        .await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(
            output_types(&run.resp),
            ["mcp_list_tools", "mcp_call", "mcp_call", "message"],
            "{}",
            run.resp
        );
        let calls = outputs_of(&run.resp, "mcp_call");
        assert_eq!(calls[0]["server_label"], "windlass");
        let shell_out = calls[0]["output"].as_str().unwrap();
        assert!(
            shell_out.starts_with("exit status: 0") && shell_out.contains("3 README.md"),
            "{shell_out}"
        );
        assert!(
            calls[1]["output"]
                .as_str()
                .unwrap()
                .contains("wrote 8 bytes"),
            "{}",
            calls[1]
        );
        assert_eq!(
            std::fs::read_to_string(work.join("count.txt")).unwrap(),
            "3 lines\n"
        );
        let list = only(&run.resp, "mcp_list_tools");
        let read_only: Vec<_> = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["annotations"]["readOnlyHint"].as_bool().unwrap(),
                )
            })
            .collect();
        assert!(
            read_only.contains(&("read_file".to_owned(), true))
                && read_only.contains(&("shell".to_owned(), false))
        );
        std::fs::remove_file(work.join("count.txt")).unwrap();
    }
}

#[tokio::test]
async fn the_model_sees_only_what_the_operator_enabled_and_the_request_selected() {
    let work = work_dir("selected");
    let gw = gateway(&work, "").await;
    gw.upstream.push(Reply::text("ok"));
    let tool = json!({"type": "mcp", "server_label": "windlass", "allowed_tools": ["read_file", "web_fetch"]});
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "x", "tools": [tool]}),
    )
    .await;
    assert_eq!(run.status(), "completed");
    let names = upstream_tool_names(&gw.upstream.requests()[0]);
    assert_eq!(
        names,
        ["windlass__read_file"],
        "web_fetch is not enabled, the others not selected"
    );
    // A request may not put its own server under the reserved label.
    let fake =
        json!({"type": "mcp", "server_label": "windlass", "server_url": "https://example.com/mcp"});
    let (status, body) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "x", "tools": [fake]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn read_only_refuses_write_file_and_the_response_completes() {
    let work = work_dir("readonly");
    let gw = gateway(&work, "autonomy = \"read_only\"").await;
    gw.upstream.push(Reply::tool_call(
        "windlass__write_file",
        r#"{"path":"x.txt","content":"x"}"#,
    ));
    gw.upstream.push(Reply::text("could not write"));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "write", "tools": [builtins_tool()]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let call = only(&run.resp, "mcp_call");
    assert!(call["error"].to_string().contains("read-only"), "{call}");
    assert!(!work.join("x.txt").exists());
    let fed_back = tool_messages(&gw.upstream.requests()[1]);
    assert!(fed_back[0].1.contains("read-only"), "{fed_back:?}");
    // The response's trace names the rule that fired.
    let (status, trace) = gw
        .get_json(&format!("/v1/responses/{}/trace", run.id()))
        .await;
    assert_eq!(status, 200, "{trace}");
    assert!(trace.to_string().contains("autonomy.read_only"), "{trace}");
}

#[tokio::test]
async fn a_rate_limited_call_is_an_error_output_and_the_response_completes() {
    let work = work_dir("rate");
    std::fs::write(work.join("a.txt"), "hello").unwrap();
    std::fs::write(work.join("b.txt"), "world").unwrap();
    let gw = gateway(&work, "tool_rate_limit = { per_minute = 1, burst = 1 }").await;
    gw.upstream.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"a.txt"}"#,
    ));
    gw.upstream.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"b.txt"}"#,
    ));
    gw.upstream.push(Reply::text("done"));
    let run = create(
        &gw,
        Mode::Sse,
        &json!({"model": "m", "input": "read twice", "tools": [builtins_tool()]}),
    )
    .await;
    assert_eq!(run.status(), "completed", "{}", run.resp);
    let calls = outputs_of(&run.resp, "mcp_call");
    assert_eq!(calls[0]["output"], "hello");
    assert!(
        calls[1]["error"].to_string().contains("rate limit"),
        "{}",
        calls[1]
    );
    assert_eq!(final_text(&run.resp), "done");
}

#[tokio::test]
async fn supervised_commands_wait_for_an_approval_then_run() {
    let work = work_dir("supervised");
    let gw = gateway(&work, "autonomy = \"supervised\"").await;
    gw.upstream.push(Reply::tool_call(
        "windlass__shell",
        r#"{"command":"echo approved > proof.txt"}"#,
    ));
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "go", "tools": [builtins_tool()]}),
    )
    .await;
    let request = only(&run.resp, "mcp_approval_request");
    assert_eq!(request["name"], "shell", "{}", run.resp);
    assert!(
        !work.join("proof.txt").exists(),
        "nothing runs before the approval"
    );
    gw.upstream.push(Reply::text("done"));
    let next = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "previous_response_id": run.id(), "tools": [builtins_tool()],
                "input": [{"type": "mcp_approval_response", "approval_request_id": request["id"], "approve": true}]}),
    )
    .await;
    assert_eq!(next.status(), "completed", "{}", next.resp);
    let call = only(&next.resp, "mcp_call");
    assert!(
        call["output"]
            .as_str()
            .unwrap()
            .starts_with("exit status: 0"),
        "{call}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("proof.txt")).unwrap(),
        "approved\n"
    );
    // Reads need no approval.
    gw.upstream.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"proof.txt"}"#,
    ));
    gw.upstream.push(Reply::text("read"));
    let read = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "read", "tools": [builtins_tool()]}),
    )
    .await;
    assert_eq!(only(&read.resp, "mcp_call")["output"], "approved\n");
}

//! `shell` and `apply_patch` run by the gateway (the operator's choice):
//! the scripted model applies a patch and runs commands; the real
//! bubblewrap sandbox runs them in the tenant's work directory, and the
//! client gets OpenAI's call and output items without being asked.

use std::sync::Arc;

use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply};
use windlass_tools::builtins::ShellConfig;
use windlass_tools::hosted::server_run::{ServerRunConfig, ServerRunExecutor};

use super::code_interpreter::TempDir;

async fn gateway(name: &str, shell: bool, apply_patch: bool) -> (Gateway, TempDir) {
    let dir = std::env::temp_dir().join(format!("windlass-srun-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exec = ServerRunExecutor::start(ServerRunConfig {
        shell,
        apply_patch,
        work_root: dir.join("work"),
        sandbox: ShellConfig::default(),
    })
    .await
    .unwrap();
    assert_eq!(exec.unavailable(), None, "bubblewrap is needed");
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![Arc::new(exec)],
        ..Default::default()
    })
    .await;
    (gw, TempDir(dir))
}

const TOOLS: &str = r#"[{"type": "shell"}, {"type": "apply_patch"}]"#;

fn script(gw: &Gateway) {
    gw.upstream.push(
        Reply::tool_call(
            "apply_patch",
            json!({"type": "create_file", "path": "notes.txt", "diff": "+hello\n+world\n"})
                .to_string(),
        )
        .with_call_id("call_patch"),
    );
    gw.upstream.push(
        Reply::tool_call(
            "shell",
            json!({"commands": ["cat notes.txt", "echo $((6*7))", "exit 3"]}).to_string(),
        )
        .with_call_id("call_shell"),
    );
    gw.upstream.push(Reply::text("Done."));
}

fn check(gw: &Gateway, resp: &Value) {
    assert_eq!(resp["status"], "completed", "{resp}");
    assert_eq!(
        output_types(resp),
        [
            "apply_patch_call",
            "apply_patch_call_output",
            "shell_call",
            "shell_call_output",
            "message"
        ]
    );
    let out = output(resp);
    assert_eq!(out[0]["call_id"], "call_patch");
    assert_eq!(out[0]["operation"]["path"], "notes.txt");
    assert_eq!(out[1]["call_id"], "call_patch");
    assert_eq!(out[1]["status"], "completed", "{}", out[1]);
    assert_eq!(out[2]["action"]["commands"][1], "echo $((6*7))");
    let chunks = out[3]["output"].as_array().unwrap();
    assert_eq!(out[3]["call_id"], "call_shell");
    assert_eq!(chunks[0]["stdout"], "hello\nworld\n", "the patched file");
    assert_eq!(chunks[1]["stdout"], "42\n");
    assert_eq!(chunks[2]["outcome"]["exit_code"], 3);
    // The model saw each result, rendered as a replay renders the items.
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 3);
    let told = tool_messages(&reqs[2]);
    let shell = &told.iter().find(|(id, _)| id == "call_shell").unwrap().1;
    assert!(shell.contains("hello") && shell.contains("42"), "{shell}");
}

#[tokio::test]
async fn shell_and_apply_patch_run_in_the_sandbox_when_the_operator_says_so() {
    let (gw, dir) = gateway("both", true, true).await;
    let body = json!({"model": "m", "input": "make notes", "tools": serde_json::from_str::<Value>(TOOLS).unwrap()});
    script(&gw);
    let (status, resp) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 200, "{resp}");
    check(&gw, &resp);
    // The file is in the tenant's directory, nowhere else.
    let work: Vec<_> = std::fs::read_dir(dir.0.join("work")).unwrap().collect();
    assert_eq!(work.len(), 1);
    let tenant_dir = work[0].as_ref().unwrap().path();
    let text = std::fs::read_to_string(tenant_dir.join("notes.txt")).unwrap();
    assert_eq!(text, "hello\nworld\n");

    // Streamed: the same items, announced as they come.
    std::fs::remove_file(tenant_dir.join("notes.txt")).unwrap();
    script(&gw);
    let mut body = body;
    body["stream"] = json!(true);
    let cap = gw.stream(&body).await;
    assert_eq!(terminal(&cap), "response.completed");
    let resp = cap.final_response().clone();
    let before = gw.upstream.requests().len();
    assert_eq!(before, 6);
    assert!(item_events(&cap).contains(&"done:shell_call_output".to_owned()));
    check_stream_items(&resp);
    gw.stop().await;
}

fn check_stream_items(resp: &Value) {
    let out = output(resp);
    assert_eq!(out[3]["output"][0]["stdout"], "hello\nworld\n");
    assert_eq!(out[4]["content"][0]["text"], "Done.");
}

#[tokio::test]
async fn a_patch_that_leaves_the_directory_fails_and_only_apply_patch_is_served() {
    // Only apply_patch runs here: shell stays the client's.
    let (gw, _dir) = gateway("patch-only", false, true).await;
    gw.upstream.push(Reply::tool_call(
        "apply_patch",
        json!({"type": "create_file", "path": "../escape.txt", "diff": "+x\n"}).to_string(),
    ));
    gw.upstream.push(Reply::tool_call(
        "shell",
        json!({"commands": ["ls"]}).to_string(),
    ));
    let body =
        json!({"model": "m", "input": "x", "tools": serde_json::from_str::<Value>(TOOLS).unwrap()});
    let (status, resp) = gw.post_json("/v1/responses", &body).await;
    assert_eq!(status, 200, "{resp}");
    assert_eq!(
        output_types(&resp),
        ["apply_patch_call", "apply_patch_call_output", "shell_call"]
    );
    let failed = &output(&resp)[1];
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["output"].as_str().unwrap().starts_with("Error:"),
        "{failed}"
    );
    // The shell call went back to the client, unrun.
    assert_eq!(output(&resp)[2]["status"], "completed");
    gw.stop().await;
}

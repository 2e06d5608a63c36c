//! Server-run `shell` / `apply_patch` against the real bubblewrap sandbox:
//! each tenant has its own directory (one tenant's files are invisible to
//! another's commands), commands cannot write outside it nor reach the
//! network, and a type the operator left to the client is not run here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use serde_json::json;
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    ServerRunType, ToolCall, ToolContext, ToolDefinition, ToolExecutor, ToolOrigin,
};
use windlass_protocol::{ApplyPatchOutputStatus, Item, ShellCallOutput, ShellOutcome};
use windlass_tools::builtins::ShellConfig;
use windlass_tools::hosted::server_run::{ServerRunConfig, ServerRunExecutor};

struct Dir(std::path::PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn executor(name: &str, shell: bool) -> (ServerRunExecutor, Dir) {
    let dir = std::env::temp_dir().join(format!("windlass-srx-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exec = ServerRunExecutor::start(ServerRunConfig {
        shell,
        apply_patch: true,
        work_root: dir.clone(),
        sandbox: ShellConfig::default(),
    })
    .await
    .unwrap();
    assert_eq!(exec.unavailable(), None, "bubblewrap is needed");
    (exec, Dir(dir))
}

fn ctx(tenant: &str) -> ToolContext {
    ToolContext {
        response_id: "resp_1".into(),
        cancel: CancellationToken::new(),
        turn: 0,
        tenant: tenant.into(),
        hosted: None,
    }
}

async fn run(exec: &ServerRunExecutor, tenant: &str, name: &str, args: serde_json::Value) -> Item {
    let call = ToolCall {
        call_id: "call_1".into(),
        name: name.into(),
        arguments: args.to_string(),
    };
    let result = exec.execute(&ctx(tenant), &call).await.unwrap();
    *result.item.unwrap()
}

async fn shell(exec: &ServerRunExecutor, tenant: &str, commands: &[&str]) -> ShellCallOutput {
    match run(exec, tenant, "shell", json!({ "commands": commands })).await {
        Item::ShellCallOutput(o) => o,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tenants_have_their_own_directories() {
    let (exec, dir) = executor("tenants", true).await;
    let patch = json!({"type": "create_file", "path": "secret.txt", "diff": "+tenant a only\n"});
    match run(&exec, "tenant-a", "apply_patch", patch).await {
        Item::ApplyPatchCallOutput(o) => assert_eq!(o.status, ApplyPatchOutputStatus::Completed),
        other => panic!("{other:?}"),
    }
    let a = shell(&exec, "tenant-a", &["cat secret.txt"]).await;
    assert_eq!(a.output[0].stdout, "tenant a only\n");
    let b = shell(&exec, "tenant-b", &["cat secret.txt", "ls -A"]).await;
    assert_eq!(b.output[0].outcome, ShellOutcome::Exit { exit_code: 1 });
    assert_eq!(b.output[1].stdout, "", "tenant b's directory is empty");
    // A tenant id cannot name a path: `../x` is just another directory.
    let odd = shell(&exec, "../tenant-a", &["ls -A"]).await;
    assert_eq!(odd.output[0].stdout, "");
    let dirs = std::fs::read_dir(&dir.0).unwrap().count();
    assert_eq!(dirs, 3);
}

#[tokio::test]
async fn commands_stay_in_the_sandbox() {
    let (exec, dir) = executor("sandbox", true).await;
    let outside = dir.0.join("outside.txt");
    let write = format!("echo x > {}", outside.display());
    let out = shell(
        &exec,
        "t",
        &[
            &write,
            "echo x > /tmp/escaped-srx",
            "getent hosts example.com || echo no-network",
        ],
    )
    .await;
    assert!(
        !outside.exists(),
        "nothing written beside the tenant's directory"
    );
    assert!(!std::path::Path::new("/tmp/escaped-srx").exists());
    assert!(
        out.output[2].stdout.contains("no-network"),
        "{:?}",
        out.output[2]
    );
    let escape = json!({"type": "create_file", "path": "../../etc-x", "diff": "+x\n"});
    match run(&exec, "t", "apply_patch", escape).await {
        Item::ApplyPatchCallOutput(o) => assert_eq!(o.status, ApplyPatchOutputStatus::Failed),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn only_the_types_the_operator_chose_are_run_here() {
    let (exec, _dir) = executor("patch-only", false).await;
    let def = |kind| ToolDefinition {
        name: "x".into(),
        description: None,
        parameters: json!({}),
        strict: None,
        origin: ToolOrigin::ServerRun(kind),
    };
    assert!(exec.can_execute(&def(ServerRunType::ApplyPatch)));
    assert!(!exec.can_execute(&def(ServerRunType::Shell)));
    let plain = ToolDefinition {
        origin: ToolOrigin::Function,
        ..def(ServerRunType::Shell)
    };
    assert!(
        !exec.can_execute(&plain),
        "a client function named shell stays the client's"
    );
    let call = ToolCall {
        call_id: "c".into(),
        name: "shell".into(),
        arguments: json!({"commands": ["true"]}).to_string(),
    };
    assert!(exec.execute(&ctx("t"), &call).await.is_err());
}

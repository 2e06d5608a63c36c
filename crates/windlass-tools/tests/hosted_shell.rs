//! A server-run `shell_call` in a real bubblewrap sandbox: commands in
//! order, exit codes, the call's time limit, output cut at the call's
//! `max_output_length`, nothing written outside the work directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use windlass_protocol::{ShellAction, ShellOutcome};
use windlass_tools::builtins::SandboxKind;
use windlass_tools::hosted::shell::ShellRunner;
use windlass_tools::sandbox::{Sandbox, SandboxLimits};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windlass-sh-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn runner(work: &std::path::Path) -> ShellRunner {
    let limits = SandboxLimits {
        kind: SandboxKind::Bwrap,
        network: false,
        cpu_seconds: 10,
        memory_mb: 512,
        max_processes: 64,
        max_file_bytes: Some(1 << 20),
        ro_paths: Vec::new(),
    };
    let sandbox = Sandbox::start(limits, work).await;
    assert_eq!(sandbox.unavailable(), None);
    ShellRunner::new(sandbox, work, Duration::from_secs(20), 64 * 1024)
}

fn action(commands: &[&str], timeout_ms: Option<u64>, max: Option<u64>) -> ShellAction {
    ShellAction {
        commands: commands.iter().map(|c| c.to_string()).collect(),
        timeout_ms,
        max_output_length: max,
    }
}

#[tokio::test]
async fn commands_run_in_order_in_the_work_directory() {
    let work = temp_dir("order");
    let r = runner(&work).await;
    let chunks = r
        .run(
            &action(
                &["echo hi > a.txt", "cat a.txt; echo err >&2; exit 3"],
                None,
                None,
            ),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].outcome, ShellOutcome::Exit { exit_code: 0 });
    assert_eq!(chunks[1].stdout, "hi\n");
    assert_eq!(chunks[1].stderr, "err\n");
    assert_eq!(chunks[1].outcome, ShellOutcome::Exit { exit_code: 3 });
    assert_eq!(std::fs::read_to_string(work.join("a.txt")).unwrap(), "hi\n");
}

#[tokio::test]
async fn the_call_limits_time_and_output() {
    let work = temp_dir("limits");
    let outside = temp_dir("limits-outside");
    let r = runner(&work).await;
    let escape = format!("echo x > {}/out.txt", outside.display());
    let chunks = r
        .run(
            &action(
                &["sleep 30", "yes | head -c 100000", &escape],
                Some(500),
                Some(1000),
            ),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(chunks[0].outcome, ShellOutcome::Timeout);
    assert_eq!(chunks[1].stdout.len(), 1000);
    assert_ne!(chunks[2].outcome, ShellOutcome::Exit { exit_code: 0 });
    assert!(!outside.join("out.txt").exists());
}

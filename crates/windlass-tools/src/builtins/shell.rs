//! `shell`: one command line run by `/bin/sh -c` in a bubblewrap sandbox —
//! read-only system directories, the work directory the only writable place
//! (plus a private /tmp), no network unless the operator allows it, its own
//! PID namespace (everything it started dies with it), and CPU time, memory
//! and process limits set by `prlimit` inside. The sandbox is probed at
//! start; if it cannot run, calls are refused with the reason. Running with
//! no isolation at all takes an explicit `sandbox = "none"`. The sandbox
//! itself is [`crate::sandbox`], shared with the hosted tools.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::config::ShellConfig;
use crate::sandbox::{self, Ending, Mount, Sandbox, SandboxLimits};

/// The shell tool, with its sandbox state decided at start.
#[derive(Debug, Clone)]
pub(super) struct Shell {
    config: ShellConfig,
    work_dir: PathBuf,
    sandbox: Sandbox,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellArgs {
    command: String,
    /// Lower than the operator's timeout (never higher).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

impl ShellConfig {
    /// The sandbox limits this config sets.
    pub fn limits(&self) -> SandboxLimits {
        SandboxLimits {
            kind: self.sandbox,
            network: self.network,
            cpu_seconds: self.cpu_seconds,
            memory_mb: self.memory_mb,
            max_processes: self.max_processes,
            max_file_bytes: None,
            ro_paths: self.ro_paths.clone(),
        }
    }
}

impl Shell {
    /// Probes the sandbox by running `true` in it.
    pub(super) async fn start(config: ShellConfig, work_dir: PathBuf) -> Shell {
        let sandbox = Sandbox::start(config.limits(), &work_dir).await;
        match sandbox.unavailable() {
            None => tracing::info!(sandbox = ?config.sandbox, "shell tool ready"),
            Some(e) => tracing::error!("shell tool unavailable: {e}"),
        }
        Shell {
            config,
            work_dir,
            sandbox,
        }
    }

    /// Why the tool cannot run, if it cannot.
    pub(super) fn unavailable(&self) -> Option<&str> {
        self.sandbox.unavailable()
    }

    /// Runs one call. Ok: the text for the model and whether it failed.
    pub(super) async fn run(
        &self,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), String> {
        if let Some(e) = self.unavailable() {
            return Err(e.to_owned());
        }
        let args: ShellArgs =
            serde_json::from_str(arguments).map_err(|e| format!("invalid arguments: {e}"))?;
        if args.command.trim().is_empty() {
            return Err("command is empty".to_owned());
        }
        // Small models send `timeout_ms: 0` meaning "the default": a zero
        // would kill every command at once, so it counts as not given.
        let limit_ms = args
            .timeout_ms
            .filter(|&t| t > 0)
            .map_or(self.config.timeout_ms, |t| t.min(self.config.timeout_ms));
        let cap = self.config.max_output_bytes;
        let cmd = self.sandbox.command(
            Mount::same(&self.work_dir),
            &[],
            &["/bin/sh", "-c", &args.command],
        );
        let out = sandbox::run(cmd, None, Duration::from_millis(limit_ms), cap, cancel)
            .await
            .map_err(|e| e.to_string())?;
        let (head, failed) = match out.ending {
            Ending::TimedOut => (
                format!("timed out after {limit_ms} ms; the command was killed"),
                true,
            ),
            Ending::Exited(s) => sandbox::describe(s),
        };
        let mut text = head;
        for (name, body, more) in [
            ("stdout", out.stdout, out.stdout_dropped),
            ("stderr", out.stderr, out.stderr_dropped),
        ] {
            if body.is_empty() && more == 0 {
                continue;
            }
            text.push_str(&format!(
                "\n--- {name} ---\n{}",
                String::from_utf8_lossy(&body)
            ));
            if more > 0 {
                text.push_str(&format!(
                    "\n[{name} truncated: {more} more bytes not shown (limit {cap} bytes)]"
                ));
            }
        }
        Ok((text, failed))
    }
}

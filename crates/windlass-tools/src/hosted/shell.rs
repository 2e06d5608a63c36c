//! `shell` run by Windlass (the operator's choice instead of handing
//! `shell_call`s to the client): each command of a `shell_call` in the
//! sandbox, in order, in one work directory (the one a server-run
//! `apply_patch` edits), answered by the `shell_call_output` item.
//!
//! Each command runs as `sh -c` with the sandbox's limits and a wall-clock
//! limit (the call's `timeout_ms`, never above the operator's); its output
//! is cut at the call's `max_output_length` (characters of stdout and
//! stderr together), never above the operator's cap.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use windlass_protocol::{ShellAction, ShellCall, ShellCallOutput, ShellOutcome, ShellOutputChunk};

use crate::sandbox::{self, Ending, Mount, RunError, Sandbox};

/// Where the commands run and how long they may take.
#[derive(Debug, Clone)]
pub struct ShellRunner {
    sandbox: Sandbox,
    work_dir: PathBuf,
    /// Upper bound of one command's wall-clock time.
    timeout: Duration,
    /// Upper bound of the bytes of output kept per stream.
    max_output_bytes: usize,
}

impl ShellRunner {
    pub fn new(
        sandbox: Sandbox,
        work_dir: &Path,
        timeout: Duration,
        max_output_bytes: usize,
    ) -> ShellRunner {
        ShellRunner {
            sandbox,
            work_dir: work_dir.to_path_buf(),
            timeout,
            max_output_bytes,
        }
    }

    /// Runs the commands of `action` in order; a cancelled run stops at the
    /// command it was in.
    pub async fn run(
        &self,
        action: &ShellAction,
        cancel: &CancellationToken,
    ) -> Result<Vec<ShellOutputChunk>, RunError> {
        if let Some(why) = self.sandbox.unavailable() {
            return Err(RunError::Spawn(why.to_owned()));
        }
        let timeout = action
            .timeout_ms
            .map(Duration::from_millis)
            .map_or(self.timeout, |t| t.min(self.timeout));
        let mut chunks = Vec::with_capacity(action.commands.len());
        for command in &action.commands {
            let cmd = self.sandbox.command(
                Mount::same(&self.work_dir),
                &[],
                &["sh", "-c", command.as_str()],
            );
            let c = sandbox::run(cmd, None, timeout, self.max_output_bytes, cancel).await?;
            let outcome = match c.ending {
                Ending::TimedOut => ShellOutcome::Timeout,
                Ending::Exited(s) => ShellOutcome::Exit {
                    exit_code: s
                        .code()
                        .unwrap_or_else(|| 128 + sandbox::signal_of(s).unwrap_or(0)),
                },
            };
            chunks.push(ShellOutputChunk {
                stdout: String::from_utf8_lossy(&c.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&c.stderr).into_owned(),
                outcome,
                created_by: None,
            });
        }
        if let Some(max) = action.max_output_length {
            cut(&mut chunks, max as usize);
        }
        Ok(chunks)
    }
}

/// Keeps at most `max` characters of output over all chunks, stdout before
/// stderr, in order.
fn cut(chunks: &mut [ShellOutputChunk], max: usize) {
    let mut left = max;
    for c in chunks {
        for s in [&mut c.stdout, &mut c.stderr] {
            let n = s.chars().count();
            if n > left {
                *s = s.chars().take(left).collect();
            }
            left = left.saturating_sub(n);
        }
    }
}

/// The `shell_call_output` answering `call` with `chunks`.
pub fn call_output(call: &ShellCall, id: String, chunks: Vec<ShellOutputChunk>) -> ShellCallOutput {
    ShellCallOutput {
        id: Some(id),
        call_id: call.call_id.clone(),
        output: chunks,
        max_output_length: call.action.max_output_length,
        status: None,
        caller: call.caller.clone(),
        created_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(stdout: &str, stderr: &str) -> ShellOutputChunk {
        ShellOutputChunk {
            stdout: stdout.into(),
            stderr: stderr.into(),
            outcome: ShellOutcome::Exit { exit_code: 0 },
            created_by: None,
        }
    }

    #[test]
    fn output_is_cut_across_commands_in_order() {
        let mut chunks = vec![chunk("abcd", "ef"), chunk("ghij", "")];
        cut(&mut chunks, 7);
        assert_eq!(
            (
                chunks[0].stdout.as_str(),
                chunks[0].stderr.as_str(),
                chunks[1].stdout.as_str()
            ),
            ("abcd", "ef", "g")
        );
    }
}

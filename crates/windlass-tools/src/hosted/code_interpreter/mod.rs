//! `code_interpreter`'s runner: Python in the bubblewrap sandbox, in a
//! container's work directory (seen by the code as `/mnt/data`, its working
//! directory), with no network, CPU, memory, process, file-size and
//! wall-clock limits, and output cut at a cap. The container's files are
//! written in before the run; the files the code created or changed come
//! back (images recognised) for the caller to save to the container.
//!
//! The Python is the operator's (`python`, default the host's
//! `/usr/bin/python3` with its standard library and whatever the system has
//! installed for it); more packages come from `python_paths`, directories
//! mounted read-only and put on `PYTHONPATH`.

mod config;
mod executor;
mod workdir;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use config::CodeInterpreterConfig;
pub use executor::CodeInterpreterExecutor;
pub use workdir::{image_type, relative, ContainerFile, WrittenFile};

use crate::sandbox::{self, Ending, Mount, RunError, Sandbox};

/// Where the code finds its files (OpenAI's code interpreter uses the same).
pub const DATA_DIR: &str = "/mnt/data";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnding {
    Exited(i32),
    /// Killed by a signal: a CPU, memory or file-size limit, or a crash.
    Killed(String),
    /// Stopped at the wall-clock limit.
    TimedOut,
}

/// What one run printed and wrote.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// stdout then stderr, each cut at the cap with a note, and a last line
    /// when the run did not end normally.
    pub logs: String,
    pub ending: RunEnding,
    /// New or changed files, by path inside the work directory.
    pub files: Vec<WrittenFile>,
    /// Changed files not returned (over the saved-bytes budget).
    pub left_out: Vec<String>,
}

impl RunOutput {
    pub fn succeeded(&self) -> bool {
        self.ending == RunEnding::Exited(0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunnerError {
    #[error("the code interpreter is unavailable: {0}")]
    Unavailable(String),
    #[error("container work directory: {0}")]
    WorkDir(String),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Runs code for containers; one per gateway.
#[derive(Debug, Clone)]
pub struct Runner {
    config: CodeInterpreterConfig,
    sandbox: Sandbox,
}

impl Runner {
    /// Probes the sandbox in the work root (made if missing).
    pub async fn start(config: CodeInterpreterConfig) -> Runner {
        let root = config.work_root();
        let _ = std::fs::create_dir_all(&root);
        let sandbox = Sandbox::start(config.limits(), &root).await;
        Runner { config, sandbox }
    }

    /// Why code cannot run here, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.sandbox.unavailable()
    }

    pub fn config(&self) -> &CodeInterpreterConfig {
        &self.config
    }

    /// The local work directory of a tenant's container. Both parts are
    /// hex-encoded so no id can name another directory.
    pub fn work_dir(&self, tenant: &str, container_id: &str) -> PathBuf {
        self.config
            .work_root()
            .join(hex(tenant))
            .join(hex(container_id))
    }

    /// Runs `code` in `dir` after writing `files` there.
    pub async fn run(
        &self,
        dir: &Path,
        files: &[ContainerFile],
        code: &str,
        cancel: &CancellationToken,
    ) -> Result<RunOutput, RunnerError> {
        if let Some(why) = self.unavailable() {
            return Err(RunnerError::Unavailable(why.to_owned()));
        }
        workdir::restore(dir, files).map_err(|e| RunnerError::WorkDir(e.to_string()))?;
        let before = workdir::snapshot(dir);
        let python = self.config.python.to_string_lossy().into_owned();
        let python_path = std::env::join_paths(&self.config.python_paths)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut env = vec![
            ("MPLBACKEND", "Agg"),
            ("MPLCONFIGDIR", "/tmp"),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONUNBUFFERED", "1"),
        ];
        if !python_path.is_empty() {
            env.push(("PYTHONPATH", &python_path));
        }
        let mount = Mount {
            host: dir,
            inside: Path::new(DATA_DIR),
        };
        // The code comes on stdin: no size limit of an argument, and nothing
        // extra in the container's directory.
        let cmd = self.sandbox.command(mount, &env, &[&python, "-s", "-"]);
        let limit = Duration::from_millis(self.config.timeout_ms);
        let cap = self.config.max_output_bytes;
        let captured =
            sandbox::run(cmd, Some(code.as_bytes().to_vec()), limit, cap, cancel).await?;
        let ending = match captured.ending {
            Ending::TimedOut => RunEnding::TimedOut,
            Ending::Exited(status) => match sandbox::signal_of(status) {
                Some(_) => RunEnding::Killed(sandbox::describe(status).0),
                None => RunEnding::Exited(status.code().unwrap_or(-1)),
            },
        };
        let logs = logs(&captured, &ending, self.config.timeout_ms);
        let (files, left_out) = workdir::written_since(dir, &before, self.config.max_saved_bytes);
        Ok(RunOutput {
            logs,
            ending,
            files,
            left_out,
        })
    }
}

fn logs(c: &sandbox::Captured, ending: &RunEnding, timeout_ms: u64) -> String {
    let mut out = String::from_utf8_lossy(&c.stdout).into_owned();
    if c.stdout_dropped > 0 {
        out.push_str(&format!(
            "\n[output truncated: {} more bytes]\n",
            c.stdout_dropped
        ));
    }
    out.push_str(&String::from_utf8_lossy(&c.stderr));
    if c.stderr_dropped > 0 {
        out.push_str(&format!(
            "\n[error output truncated: {} more bytes]\n",
            c.stderr_dropped
        ));
    }
    match ending {
        RunEnding::Exited(_) => {}
        RunEnding::TimedOut => {
            out.push_str(&format!("\n[execution stopped after {timeout_ms} ms]\n"));
        }
        RunEnding::Killed(why) => out.push_str(&format!("\n[execution killed: {why}]\n")),
    }
    out
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

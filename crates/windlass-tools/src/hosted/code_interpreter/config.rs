//! `[code_interpreter]`: the Python the sandbox runs and its limits.
//!
//! ```toml
//! [code_interpreter]
//! enabled = true
//! python = "/usr/bin/python3"
//! # Extra packages: a directory of installed packages (e.g. a venv's
//! # site-packages), mounted read-only and put on PYTHONPATH.
//! python_paths = ["/opt/ci-venv/lib/python3.11/site-packages"]
//! timeout_ms = 30000
//! memory_mb = 1024
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::builtins::SandboxKind;
use crate::sandbox::SandboxLimits;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeInterpreterConfig {
    /// Serve `code_interpreter` tools (otherwise they are refused).
    #[serde(default)]
    pub enabled: bool,
    /// The Python interpreter. A path outside the system directories is
    /// mounted read-only with the installation it belongs to.
    #[serde(default = "default_python")]
    pub python: PathBuf,
    /// Directories of extra packages, read-only inside and on PYTHONPATH.
    #[serde(default)]
    pub python_paths: Vec<PathBuf>,
    #[serde(default)]
    pub sandbox: SandboxKind,
    /// Wall-clock limit of one run.
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default = "default_cpu")]
    pub cpu_seconds: u64,
    /// Address space of the run, in MiB.
    #[serde(default = "default_memory")]
    pub memory_mb: u64,
    #[serde(default = "default_procs")]
    pub max_processes: u64,
    /// Output kept per stream (stdout, stderr); the rest is cut with a note.
    #[serde(default = "default_output")]
    pub max_output_bytes: usize,
    /// Largest file the code may write.
    #[serde(default = "default_file")]
    pub max_file_bytes: u64,
    /// Bytes of new or changed files saved back per run; past it, files are
    /// left out (and said so in the logs).
    #[serde(default = "default_saved")]
    pub max_saved_bytes: u64,
    /// Where per-container work directories are made (default: the system
    /// temp directory).
    #[serde(default)]
    pub work_root: Option<PathBuf>,
}

impl Default for CodeInterpreterConfig {
    fn default() -> Self {
        CodeInterpreterConfig {
            enabled: false,
            python: default_python(),
            python_paths: Vec::new(),
            sandbox: SandboxKind::Bwrap,
            timeout_ms: default_timeout(),
            cpu_seconds: default_cpu(),
            memory_mb: default_memory(),
            max_processes: default_procs(),
            max_output_bytes: default_output(),
            max_file_bytes: default_file(),
            max_saved_bytes: default_saved(),
            work_root: None,
        }
    }
}

impl CodeInterpreterConfig {
    /// The sandbox's limits: never any network; the interpreter's own
    /// installation and the package directories visible read-only.
    pub fn limits(&self) -> SandboxLimits {
        let mut ro_paths = self.python_paths.clone();
        ro_paths.extend(install_root(&self.python));
        SandboxLimits {
            kind: self.sandbox,
            network: false,
            cpu_seconds: self.cpu_seconds,
            memory_mb: self.memory_mb,
            max_processes: self.max_processes,
            max_file_bytes: Some(self.max_file_bytes),
            ro_paths,
        }
    }

    pub fn work_root(&self) -> PathBuf {
        self.work_root
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("windlass-containers"))
    }
}

/// The installation a Python outside the system directories belongs to
/// (`<prefix>/bin/python3` -> `<prefix>`), resolved through symlinks.
fn install_root(python: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(python).ok()?;
    let system = ["/usr", "/bin", "/sbin", "/lib", "/lib64"];
    if system.iter().any(|d| real.starts_with(d)) {
        return None;
    }
    let bin = real.parent()?;
    Some(bin.parent().unwrap_or(bin).to_path_buf())
}

fn default_python() -> PathBuf {
    PathBuf::from("/usr/bin/python3")
}
fn default_timeout() -> u64 {
    30_000
}
fn default_cpu() -> u64 {
    20
}
fn default_memory() -> u64 {
    1024
}
fn default_procs() -> u64 {
    64
}
fn default_output() -> usize {
    64 * 1024
}
fn default_file() -> u64 {
    64 * 1024 * 1024
}
fn default_saved() -> u64 {
    128 * 1024 * 1024
}

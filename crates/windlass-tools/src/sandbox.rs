//! The sandbox every command Windlass runs for a model goes through: the
//! `shell` built-in, `code_interpreter`, and a server-run `shell` or
//! `apply_patch`.
//!
//! bubblewrap: the system directories read-only, one writable directory
//! (mounted where the caller says, the working directory), a private /tmp,
//! no network unless allowed, its own PID namespace (everything it started
//! dies with it), a cleared environment, and CPU time, address space,
//! process and file size limits set by `prlimit` inside. The sandbox is
//! probed at start; if it cannot run, every command is refused with the
//! reason. `none` (no isolation) runs the command directly, still with the
//! limits and a cleared environment, only on the operator's explicit
//! choice.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

pub use crate::builtins::config::SandboxKind;

const SEARCH_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// System directories visible (read-only) inside the sandbox.
const SYSTEM_DIRS: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];
/// How long output is still read after the command ended or was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What a sandboxed command may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLimits {
    pub kind: SandboxKind,
    /// Give commands the host's network (default: none at all).
    pub network: bool,
    pub cpu_seconds: u64,
    /// Address space, in MiB.
    pub memory_mb: u64,
    pub max_processes: u64,
    /// Largest file a command may write, in bytes (`None`: no limit).
    pub max_file_bytes: Option<u64>,
    /// More directories visible read-only (at the same path).
    pub ro_paths: Vec<PathBuf>,
}

/// The one writable directory: `host` on this machine, seen at `inside` by
/// the command, which starts there.
#[derive(Debug, Clone, Copy)]
pub struct Mount<'a> {
    pub host: &'a Path,
    pub inside: &'a Path,
}

impl<'a> Mount<'a> {
    /// The directory at its own path.
    pub fn same(dir: &'a Path) -> Mount<'a> {
        Mount {
            host: dir,
            inside: dir,
        }
    }
}

/// The sandbox, with its availability decided at start.
#[derive(Debug, Clone)]
pub struct Sandbox {
    limits: SandboxLimits,
    prlimit: bool,
    /// Err: why the sandbox cannot run.
    ready: Result<(), String>,
}

fn which(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

impl Sandbox {
    /// Probes the sandbox by running `true` in it (in `probe_dir`).
    pub async fn start(limits: SandboxLimits, probe_dir: &Path) -> Sandbox {
        let mut sandbox = Sandbox {
            limits,
            prlimit: which("prlimit"),
            ready: Ok(()),
        };
        sandbox.ready = sandbox.probe(probe_dir).await;
        sandbox
    }

    /// Why commands cannot run, if they cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.ready.as_ref().err().map(String::as_str)
    }

    pub fn limits(&self) -> &SandboxLimits {
        &self.limits
    }

    async fn probe(&self, dir: &Path) -> Result<(), String> {
        if self.limits.kind == SandboxKind::None {
            return Ok(());
        }
        if !which("bwrap") {
            return Err("the sandbox (bubblewrap, `bwrap`) is not installed; install it, or set sandbox = \"none\" to run commands without isolation".to_owned());
        }
        if !self.prlimit {
            return Err(
                "`prlimit` (util-linux) is not installed; the sandbox needs it for resource limits"
                    .to_owned(),
            );
        }
        let mut cmd = self.command(Mount::same(dir), &[], &["true"]);
        cmd.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        let out = tokio::time::timeout(Duration::from_secs(10), cmd.output())
            .await
            .map_err(|_| "the sandbox did not start within 10 s".to_owned())?
            .map_err(|e| format!("cannot start bwrap: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "the sandbox (bubblewrap) cannot start here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    fn prlimit_args(&self) -> Vec<String> {
        let l = &self.limits;
        let mut args = vec![
            format!("--cpu={}", l.cpu_seconds),
            format!("--as={}", l.memory_mb.saturating_mul(1024 * 1024)),
            format!("--nproc={}", l.max_processes),
        ];
        if let Some(bytes) = l.max_file_bytes {
            args.push(format!("--fsize={bytes}"));
        }
        args.push("--".to_owned());
        args
    }

    /// `argv` in the sandbox with `mount` as its working directory and only
    /// `PATH`, `HOME` (the mount), `TMPDIR`, `LANG` and `env` set.
    pub fn command(
        &self,
        mount: Mount<'_>,
        env: &[(&str, &str)],
        argv: &[&str],
    ) -> tokio::process::Command {
        let inside = mount.inside.to_string_lossy().into_owned();
        let host = mount.host.to_string_lossy().into_owned();
        let mut vars: Vec<(&str, &str)> = vec![
            ("PATH", SEARCH_PATH),
            ("HOME", &inside),
            ("TMPDIR", "/tmp"),
            ("LANG", "C.UTF-8"),
        ];
        vars.extend_from_slice(env);
        let mut cmd = match self.limits.kind {
            SandboxKind::Bwrap => {
                let mut c = tokio::process::Command::new("bwrap");
                c.args([
                    "--die-with-parent",
                    "--new-session",
                    "--unshare-pid",
                    "--unshare-ipc",
                    "--unshare-uts",
                ]);
                if !self.limits.network {
                    c.arg("--unshare-net");
                }
                for dir in SYSTEM_DIRS {
                    bind_system(&mut c, Path::new(dir));
                }
                for dir in &self.limits.ro_paths {
                    let d = dir.to_string_lossy();
                    c.args(["--ro-bind-try", &d, &d]);
                }
                c.args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
                c.args(["--bind", &host, &inside, "--chdir", &inside]);
                c.arg("--clearenv");
                for (k, v) in &vars {
                    c.args(["--setenv", k, v]);
                }
                c.arg("--");
                c.arg("prlimit").args(self.prlimit_args());
                c.args(argv);
                c.current_dir(mount.host);
                c
            }
            SandboxKind::None => {
                let mut c = match self.prlimit {
                    true => {
                        let mut c = tokio::process::Command::new("prlimit");
                        c.args(self.prlimit_args()).args(argv);
                        c
                    }
                    false => {
                        let mut c = tokio::process::Command::new(argv[0]);
                        c.args(&argv[1..]);
                        c
                    }
                };
                // Without a mount namespace the command sees the host path.
                c.env_clear()
                    .envs(vars.iter().map(|(k, v)| {
                        let v = if *k == "HOME" { host.as_str() } else { v };
                        (*k, v)
                    }))
                    .current_dir(mount.host);
                c
            }
        };
        cmd.kill_on_drop(true);
        cmd
    }
}

/// Binds a system directory read-only, keeping merged-/usr symlinks
/// (`/bin -> usr/bin`) as symlinks.
fn bind_system(cmd: &mut tokio::process::Command, dir: &Path) {
    let d = dir.to_string_lossy();
    match std::fs::read_link(dir) {
        Ok(target) => {
            cmd.args(["--symlink", &target.to_string_lossy(), &d]);
        }
        Err(_) => {
            cmd.args(["--ro-bind-try", &d, &d]);
        }
    }
}

/// How a sandboxed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(ExitStatus),
    /// Killed at the wall-clock limit.
    TimedOut,
}

/// What a command printed (each stream capped) and how it ended.
#[derive(Debug, Clone)]
pub struct Captured {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes read past the cap and dropped.
    pub stdout_dropped: u64,
    pub stderr_dropped: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("cancelled")]
    Cancelled,
    #[error("cannot start the command: {0}")]
    Spawn(String),
    #[error("waiting for the command failed: {0}")]
    Wait(String),
}

/// Runs `cmd` to the end or to `limit`, feeding it `stdin`, keeping at most
/// `cap` bytes of each output stream (the rest is read and dropped, so the
/// command never blocks on a full pipe).
pub async fn run(
    mut cmd: tokio::process::Command,
    stdin: Option<Vec<u8>>,
    limit: Duration,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Captured, RunError> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| RunError::Spawn(e.to_string()))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A command that exits without reading its input is not an error.
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        });
    }
    let out = tokio::spawn(read_capped(child.stdout.take(), cap));
    let err = tokio::spawn(read_capped(child.stderr.take(), cap));
    let status = tokio::select! {
        s = child.wait() => Some(s.map_err(|e| RunError::Wait(e.to_string()))?),
        _ = tokio::time::sleep(limit) => None,
        _ = cancel.cancelled() => {
            let _ = child.kill().await;
            return Err(RunError::Cancelled);
        }
    };
    if status.is_none() {
        let _ = child.kill().await;
    }
    // Everything in the sandbox dies with it; without one, a leftover
    // background process could hold the pipes, so do not wait long.
    let (stdout, stdout_dropped) = tokio::time::timeout(DRAIN_GRACE, out)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let (stderr, stderr_dropped) = tokio::time::timeout(DRAIN_GRACE, err)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Ok(Captured {
        ending: status.map_or(Ending::TimedOut, Ending::Exited),
        stdout,
        stderr,
        stdout_dropped,
        stderr_dropped,
    })
}

/// The signal that ended a command, if one did: bubblewrap and sh report a
/// child killed by signal N as exit status 128 + N.
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal().or_else(|| {
        status
            .code()
            .filter(|c| (129..160).contains(c))
            .map(|c| c - 128)
    })
}

/// The exit status line, and whether it is a failure.
pub fn describe(status: ExitStatus) -> (String, bool) {
    let code = status.code().map_or("none".to_owned(), |c| c.to_string());
    match signal_of(status) {
        Some(sig) => {
            let why = match sig {
                9 => "SIGKILL: killed (time, CPU or memory limit)",
                24 => "SIGXCPU: CPU time limit reached",
                25 => "SIGXFSZ: file size limit reached",
                11 => "SIGSEGV: crashed",
                6 => "SIGABRT: aborted",
                15 => "SIGTERM: terminated",
                _ => "killed by a signal",
            };
            (format!("exit status: {code} (signal {sig}, {why})"), true)
        }
        None => (format!("exit status: {code}"), !status.success()),
    }
}

/// Reads a stream keeping at most `cap` bytes; returns them and how many
/// more were discarded.
async fn read_capped<R: AsyncRead + Unpin>(stream: Option<R>, cap: usize) -> (Vec<u8>, u64) {
    let Some(mut stream) = stream else {
        return (Vec::new(), 0);
    };
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                let take = room.min(n);
                kept.extend_from_slice(&buf[..take]);
                dropped += (n - take) as u64;
            }
        }
    }
    (kept, dropped)
}

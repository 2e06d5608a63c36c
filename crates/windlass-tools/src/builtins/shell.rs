//! `shell`: one command line run by `/bin/sh -c` in a bubblewrap sandbox —
//! read-only system directories, the work directory the only writable place
//! (plus a private /tmp), no network unless the operator allows it, its own
//! PID namespace (everything it started dies with it), and CPU time, memory
//! and process limits set by `prlimit` inside. The sandbox is probed at
//! start; if it cannot run, calls are refused with the reason. Running with
//! no isolation at all takes an explicit `sandbox = "none"`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use super::config::{SandboxKind, ShellConfig};

const SEARCH_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// System directories visible (read-only) inside the sandbox.
const SYSTEM_DIRS: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

/// The shell tool, with its sandbox state decided at start.
#[derive(Debug, Clone)]
pub struct Shell {
    config: ShellConfig,
    work_dir: PathBuf,
    /// Err: why the sandbox cannot run (the tool then refuses every call).
    ready: Result<(), String>,
    /// `prlimit` was found (always required with bubblewrap).
    prlimit: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellArgs {
    command: String,
    /// Lower than the operator's timeout (never higher).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

fn which(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

impl Shell {
    /// Probes the sandbox by running `true` in it.
    pub async fn start(config: ShellConfig, work_dir: PathBuf) -> Shell {
        let prlimit = which("prlimit");
        let mut shell = Shell {
            config,
            work_dir,
            ready: Ok(()),
            prlimit,
        };
        shell.ready = shell.probe().await;
        match &shell.ready {
            Ok(()) => tracing::info!(sandbox = ?shell.config.sandbox, "shell tool ready"),
            Err(e) => tracing::error!("shell tool unavailable: {e}"),
        }
        shell
    }

    /// Why the tool cannot run, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.ready.as_ref().err().map(String::as_str)
    }

    async fn probe(&self) -> Result<(), String> {
        if self.config.sandbox == SandboxKind::None {
            return Ok(());
        }
        if !which("bwrap") {
            return Err("the sandbox (bubblewrap, `bwrap`) is not installed; install it, or set [builtins.shell] sandbox = \"none\" to run commands without isolation".to_owned());
        }
        if !self.prlimit {
            return Err(
                "`prlimit` (util-linux) is not installed; the sandbox needs it for resource limits"
                    .to_owned(),
            );
        }
        let mut cmd = self.command("true");
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

    fn limits(&self) -> Vec<String> {
        let c = &self.config;
        vec![
            format!("--cpu={}", c.cpu_seconds),
            format!("--as={}", c.memory_mb.saturating_mul(1024 * 1024)),
            format!("--nproc={}", c.max_processes),
            "--".to_owned(),
        ]
    }

    fn command(&self, line: &str) -> tokio::process::Command {
        let work = self.work_dir.to_string_lossy().into_owned();
        let mut cmd = match self.config.sandbox {
            SandboxKind::Bwrap => {
                let mut c = tokio::process::Command::new("bwrap");
                c.args([
                    "--die-with-parent",
                    "--new-session",
                    "--unshare-pid",
                    "--unshare-ipc",
                    "--unshare-uts",
                ]);
                if !self.config.network {
                    c.arg("--unshare-net");
                }
                for dir in SYSTEM_DIRS {
                    bind_system(&mut c, Path::new(dir));
                }
                for dir in &self.config.ro_paths {
                    let d = dir.to_string_lossy();
                    c.args(["--ro-bind-try", &d, &d]);
                }
                c.args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
                c.args(["--bind", &work, &work, "--chdir", &work]);
                c.args([
                    "--clearenv",
                    "--setenv",
                    "PATH",
                    SEARCH_PATH,
                    "--setenv",
                    "HOME",
                    &work,
                ]);
                c.args([
                    "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8", "--",
                ]);
                c.arg("prlimit").args(self.limits());
                c
            }
            SandboxKind::None if self.prlimit => {
                let mut c = tokio::process::Command::new("prlimit");
                c.args(self.limits());
                c
            }
            SandboxKind::None => tokio::process::Command::new("/bin/sh"),
        };
        if cmd.as_std().get_program() != "/bin/sh" {
            cmd.arg("/bin/sh");
        }
        cmd.args(["-c", line])
            .current_dir(&self.work_dir)
            .kill_on_drop(true);
        cmd
    }

    /// Runs one call. Ok: the text for the model and whether it failed.
    pub async fn run(
        &self,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), String> {
        if let Err(e) = &self.ready {
            return Err(e.clone());
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
        let mut cmd = self.command(&args.command);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the command: {e}"))?;
        let out = tokio::spawn(read_capped(child.stdout.take(), cap));
        let err = tokio::spawn(read_capped(child.stderr.take(), cap));
        let status = tokio::select! {
            s = child.wait() => Some(s.map_err(|e| format!("waiting for the command failed: {e}"))?),
            _ = tokio::time::sleep(Duration::from_millis(limit_ms)) => None,
            _ = cancel.cancelled() => {
                let _ = child.kill().await;
                return Err("cancelled".to_owned());
            }
        };
        if status.is_none() {
            let _ = child.kill().await;
        }
        // Everything in the sandbox dies with it; without one, a leftover
        // background process could hold the pipes, so do not wait long.
        let grace = Duration::from_secs(2);
        let (stdout, stdout_more) = tokio::time::timeout(grace, out)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let (stderr, stderr_more) = tokio::time::timeout(grace, err)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();

        let (head, failed) = match status {
            None => (
                format!("timed out after {limit_ms} ms; the command was killed"),
                true,
            ),
            Some(s) => describe(s),
        };
        let mut text = head;
        for (name, body, more) in [
            ("stdout", stdout, stdout_more),
            ("stderr", stderr, stderr_more),
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

/// The exit status line, and whether it is a failure.
fn describe(status: std::process::ExitStatus) -> (String, bool) {
    use std::os::unix::process::ExitStatusExt;
    // bubblewrap and sh report a child killed by signal N as 128 + N.
    let signal = status.signal().or_else(|| {
        status
            .code()
            .filter(|c| (129..160).contains(c))
            .map(|c| c - 128)
    });
    let code = status.code().map_or("none".to_owned(), |c| c.to_string());
    match signal {
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
/// more were discarded (the child never blocks on a full pipe).
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

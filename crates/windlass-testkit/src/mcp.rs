//! Real MCP servers for integration tests, installed by `./scripts/mcp-fixtures.sh`:
//!
//! * `tests/mcp/fixture_server.py`, our own server written with the official `mcp`
//!   Python SDK, run with mcp 2.x ([`PyMcp::V2`], `.venv-test`) or mcp 1.x
//!   ([`PyMcp::V1`], `.venv-mcp1`). Tools: `add`, `echo`, `slow`, `crash`, `fail`,
//!   `multi`, `weather` (see the script).
//! * npm `@modelcontextprotocol/server-everything` ([`McpFixture::everything`]).
//!
//! Every HTTP fixture listens on a free loopback port at `/mcp` and is killed when
//! dropped. Server output goes to a temporary log file, printed when the test panics.
//!
//! Paths can be overridden with `WINDLASS_MCP_PYTHON`, `WINDLASS_MCP_PYTHON_V1` and
//! `WINDLASS_MCP_EVERYTHING`.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MISSING: &str = "MCP fixtures missing: run ./scripts/mcp-fixtures.sh";
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Which `mcp` Python SDK runs the fixture server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyMcp {
    /// mcp 2.x (`MCPServer`), from `.venv-test`.
    V2,
    /// mcp 1.x (`FastMCP`), from `.venv-mcp1`.
    V1,
}

/// A running MCP server over streamable HTTP; killed on drop.
#[derive(Debug)]
pub struct McpFixture {
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    child: Child,
    log: PathBuf,
}

impl McpFixture {
    /// Our fixture server over streamable HTTP on a free port, once it answers.
    pub async fn python(v: PyMcp) -> McpFixture {
        Self::python_with(v, &[]).await
    }

    /// [`McpFixture::python`] with extra server flags, e.g. `["--page-size", "2"]`,
    /// `["--stateless"]`, `["--json"]`.
    pub async fn python_with(v: PyMcp, extra_args: &[&str]) -> McpFixture {
        let (python, script) = (python_path(v), fixture_script());
        let name = match v {
            PyMcp::V2 => "py-v2",
            PyMcp::V1 => "py-v1",
        };
        Self::spawn(name, |port| {
            let mut cmd = Command::new(&python);
            cmd.arg(&script)
                .args(["--port", &port.to_string()])
                .args(extra_args);
            cmd
        })
        .await
    }

    /// npm `server-everything` over streamable HTTP (`PORT` env var, path `/mcp`).
    pub async fn everything() -> McpFixture {
        let bin = everything_path();
        Self::spawn("everything", |port| {
            let mut cmd = Command::new(&bin);
            cmd.arg("streamableHttp").env("PORT", port.to_string());
            cmd
        })
        .await
    }

    /// Kills the server process now, as if it had crashed.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The file that collects the server's stdout and stderr.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Starts the server on a free port and waits until it answers HTTP. Retries
    /// on a new port when the process dies early (e.g. the port was taken).
    async fn spawn(name: &str, make: impl Fn(u16) -> Command) -> McpFixture {
        let mut last_log = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let log = std::env::temp_dir().join(format!(
                "windlass-mcp-{name}-{}-{port}.log",
                std::process::id()
            ));
            let out = File::create(&log).expect("create MCP fixture log file");
            let err = out.try_clone().expect("clone MCP fixture log file");
            let child = make(port)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("{MISSING} (spawning {name}: {e})"));
            let mut fixture = McpFixture {
                url: format!("http://127.0.0.1:{port}/mcp"),
                child,
                log: log.clone(),
            };
            match fixture.wait_ready().await {
                Ok(()) => return fixture,
                Err(why) => {
                    fixture.kill();
                    last_log = format!("{why}; log {}:\n{}", log.display(), tail(&log));
                }
            }
        }
        panic!("MCP fixture {name} did not start: {last_log}");
    }

    /// Polls a TCP connect, then any HTTP answer from the endpoint.
    async fn wait_ready(&mut self) -> Result<(), String> {
        let addr: SocketAddr = self.url["http://".len()..]
            .split('/')
            .next()
            .and_then(|a| a.parse().ok())
            .expect("fixture address");
        windlass_providers::install_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("reqwest client");
        let start = Instant::now();
        while start.elapsed() < READY_TIMEOUT {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("server exited early ({status})"));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
                && client.get(&self.url).send().await.is_ok()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("no answer within {READY_TIMEOUT:?}"))
    }
}

impl Drop for McpFixture {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "MCP fixture {} log {}:\n{}",
                self.url,
                self.log.display(),
                tail(&self.log)
            );
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// `(program, args)` that run the fixture server over stdio.
pub fn python_stdio_command(v: PyMcp) -> (String, Vec<String>) {
    (
        python_path(v).display().to_string(),
        vec![fixture_script().display().to_string(), "--stdio".into()],
    )
}

/// `(program, args)` that run npm `server-everything` over stdio.
pub fn everything_stdio_command() -> (String, Vec<String>) {
    (
        everything_path().display().to_string(),
        vec!["stdio".into()],
    )
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The env var's value, else `default` under the workspace root; panics if missing.
fn resolve(var: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(default));
    if !path.exists() {
        panic!(
            "{MISSING} ({} not found; override with {var})",
            path.display()
        );
    }
    path
}

fn python_path(v: PyMcp) -> PathBuf {
    match v {
        PyMcp::V2 => resolve("WINDLASS_MCP_PYTHON", ".venv-test/bin/python"),
        PyMcp::V1 => resolve("WINDLASS_MCP_PYTHON_V1", ".venv-mcp1/bin/python"),
    }
}

fn everything_path() -> PathBuf {
    resolve(
        "WINDLASS_MCP_EVERYTHING",
        "tests/mcp/node/node_modules/.bin/mcp-server-everything",
    )
}

fn fixture_script() -> PathBuf {
    let path = workspace_root().join("tests/mcp/fixture_server.py");
    assert!(path.exists(), "{} not found", path.display());
    path
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// The last 4 KB of a log file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut start = text.len().saturating_sub(4096);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

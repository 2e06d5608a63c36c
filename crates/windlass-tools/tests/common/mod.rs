//! The testkit's MCP fixtures, plus a restart on the same port (the testkit
//! picks a new free port per fixture, but recovery of a configured server
//! needs the server back where the config points).

use std::process::Stdio;
use std::time::{Duration, Instant};

pub(crate) use windlass_testkit::mcp::{
    everything_stdio_command, python_stdio_command, McpFixture, PyMcp,
};

/// The fixture server started again on the port of a killed fixture.
pub(crate) struct Restarted {
    child: tokio::process::Child,
}

/// Starts the Python fixture server on the port of `url` and waits until it
/// accepts connections.
pub(crate) async fn restart_at(url: &str, version: PyMcp) -> Restarted {
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .expect("fixture url has a port");
    // The stdio command names the interpreter and the script; run the same
    // script over HTTP instead.
    let (python, args) = python_stdio_command(version);
    let child = tokio::process::Command::new(python)
        .arg(&args[0])
        .args(["--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn fixture server");
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "fixture did not restart on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Restarted { child }
}

impl Drop for Restarted {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

//! The `[builtins]` table: which built-in tools exist on this gateway and
//! their limits. Everything is off until the operator lists it.
//!
//! ```toml
//! [builtins]
//! enabled = ["shell", "read_file", "write_file", "edit_file", "list_dir", "web_fetch"]
//! work_dir = "/srv/windlass/work"     # writable; relative paths start here
//! roots = ["/srv/windlass/docs"]      # more directories the file tools may use
//!
//! [builtins.shell]
//! sandbox = "bwrap"                   # or "none" (no isolation at all)
//! timeout_ms = 30000
//! max_output_bytes = 65536
//! network = false
//! cpu_seconds = 10
//! memory_mb = 512
//! max_processes = 64
//!
//! [builtins.web_fetch]
//! timeout_ms = 10000
//! max_bytes = 1048576
//! allow_domains = ["docs.rs", "*.rust-lang.org"]
//! allow_hosts = []                    # outbound-guard exceptions (as mcp.allow_hosts)
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// The names of every built-in tool.
pub const TOOL_NAMES: [&str; 6] = [
    "shell",
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "web_fetch",
];

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuiltinsConfig {
    /// The tools requests may select (none by default).
    #[serde(default)]
    pub enabled: Vec<String>,
    /// The one writable directory of `shell` and the first root of the file
    /// tools. Required when `shell` or a file tool is enabled.
    #[serde(default)]
    pub work_dir: Option<PathBuf>,
    /// More directories the file tools may read and write.
    #[serde(default)]
    pub roots: Vec<PathBuf>,
    /// Largest file `read_file` returns in full, in bytes.
    #[serde(default = "default_max_read")]
    pub max_read_bytes: u64,
    #[serde(default)]
    pub shell: ShellConfig,
    #[serde(default)]
    pub web_fetch: FetchConfig,
}

fn default_max_read() -> u64 {
    256 * 1024
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxKind {
    /// bubblewrap: read-only system, one writable work directory, new PID
    /// namespace, no network unless allowed.
    #[default]
    Bwrap,
    /// No isolation: commands run as the gateway's user. Only on explicit
    /// request.
    None,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    #[serde(default)]
    pub sandbox: SandboxKind,
    #[serde(default = "default_shell_timeout")]
    pub timeout_ms: u64,
    #[serde(default = "default_output_cap")]
    pub max_output_bytes: usize,
    /// Give commands the host's network (default: none at all).
    #[serde(default)]
    pub network: bool,
    #[serde(default = "default_cpu")]
    pub cpu_seconds: u64,
    #[serde(default = "default_memory")]
    pub memory_mb: u64,
    #[serde(default = "default_procs")]
    pub max_processes: u64,
    /// More directories visible read-only inside the sandbox (the system
    /// directories /usr, /bin, /lib*, /etc always are).
    #[serde(default)]
    pub ro_paths: Vec<PathBuf>,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            sandbox: SandboxKind::Bwrap,
            timeout_ms: default_shell_timeout(),
            max_output_bytes: default_output_cap(),
            network: false,
            cpu_seconds: default_cpu(),
            memory_mb: default_memory(),
            max_processes: default_procs(),
            ro_paths: Vec::new(),
        }
    }
}

fn default_shell_timeout() -> u64 {
    30_000
}
fn default_output_cap() -> usize {
    64 * 1024
}
fn default_cpu() -> u64 {
    10
}
fn default_memory() -> u64 {
    512
}
fn default_procs() -> u64 {
    64
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    #[serde(default = "default_fetch_timeout")]
    pub timeout_ms: u64,
    /// Bytes read from the body at most; the rest is cut (and said so).
    #[serde(default = "default_fetch_bytes")]
    pub max_bytes: usize,
    /// Hosts `web_fetch` may reach: exact names or `*.suffix`. `None`: any
    /// public host.
    #[serde(default)]
    pub allow_domains: Option<Vec<String>>,
    /// Outbound-guard exceptions: host names, addresses or CIDRs that may be
    /// fetched although private or loopback.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            timeout_ms: default_fetch_timeout(),
            max_bytes: default_fetch_bytes(),
            allow_domains: None,
            allow_hosts: Vec::new(),
        }
    }
}

fn default_fetch_timeout() -> u64 {
    10_000
}
fn default_fetch_bytes() -> usize {
    1024 * 1024
}

//! The enabled built-in tools, ready to run: checked from the config,
//! listed as MCP tools and called by name. The in-process hub (`hub.rs`)
//! and the stdio server (`stdio.rs`) both serve this set.

use std::path::PathBuf;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use windlass_engine::ToolResult;
use windlass_protocol::McpToolInfo;

use super::config::{BuiltinsConfig, TOOL_NAMES};
use super::fetch::Fetch;
use super::files::{self, Roots};
use super::shell::Shell;

/// The reserved MCP server label of the built-in tools.
pub const BUILTIN_LABEL: &str = "windlass";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuiltinsError {
    #[error("builtins.enabled: unknown tool '{0}' (known: shell, read_file, write_file, edit_file, list_dir, web_fetch)")]
    UnknownTool(String),
    #[error("builtins.work_dir is required when shell or a file tool is enabled")]
    NoWorkDir,
    #[error("builtins: directory {path}: {problem}")]
    Dir { path: String, problem: String },
    #[error("{0}")]
    Fetch(String),
}

/// The enabled built-in tools, ready to run.
#[derive(Debug)]
pub struct Builtins {
    enabled: Vec<String>,
    roots: Option<Roots>,
    max_read: u64,
    shell: Option<Shell>,
    fetch: Option<Fetch>,
}

/// Canonical form of a directory that must exist (the work dir is created).
fn canonical_dir(path: &PathBuf, create: bool) -> Result<PathBuf, BuiltinsError> {
    let err = |problem: String| BuiltinsError::Dir {
        path: path.display().to_string(),
        problem,
    };
    if create {
        std::fs::create_dir_all(path).map_err(|e| err(e.to_string()))?;
    }
    let real = path.canonicalize().map_err(|e| err(e.to_string()))?;
    if !real.is_dir() {
        return Err(err("not a directory".to_owned()));
    }
    Ok(real)
}

impl Builtins {
    /// Checks the config, resolves the directories and probes the sandbox.
    pub async fn start(config: BuiltinsConfig) -> Result<Builtins, BuiltinsError> {
        let mut enabled = Vec::new();
        for name in &config.enabled {
            if !TOOL_NAMES.contains(&name.as_str()) {
                return Err(BuiltinsError::UnknownTool(name.clone()));
            }
            if !enabled.contains(name) {
                enabled.push(name.clone());
            }
        }
        let needs_dir = enabled.iter().any(|n| n != "web_fetch");
        let roots = match (&config.work_dir, needs_dir) {
            (Some(dir), _) => {
                let base = canonical_dir(dir, true)?;
                let mut all = vec![base.clone()];
                for r in &config.roots {
                    all.push(canonical_dir(r, false)?);
                }
                Some(Roots { base, all })
            }
            (None, true) => return Err(BuiltinsError::NoWorkDir),
            (None, false) => None,
        };
        let shell = match (&roots, enabled.iter().any(|n| n == "shell")) {
            (Some(r), true) => Some(Shell::start(config.shell.clone(), r.base.clone()).await),
            _ => None,
        };
        let fetch = if enabled.iter().any(|n| n == "web_fetch") {
            Some(Fetch::new(config.web_fetch.clone()).map_err(BuiltinsError::Fetch)?)
        } else {
            None
        };
        Ok(Builtins {
            enabled,
            roots,
            max_read: config.max_read_bytes,
            shell,
            fetch,
        })
    }

    /// Nothing enabled: requests may not select the label.
    pub fn is_empty(&self) -> bool {
        self.enabled.is_empty()
    }

    /// The work directory and every root (canonical), for governance.
    pub fn workspace(&self) -> (Option<PathBuf>, Vec<PathBuf>) {
        match &self.roots {
            Some(r) => (Some(r.base.clone()), r.all.clone()),
            None => (None, Vec::new()),
        }
    }

    /// Why `shell` cannot run, when it is enabled but its sandbox is not.
    pub fn shell_unavailable(&self) -> Option<&str> {
        self.shell.as_ref().and_then(Shell::unavailable)
    }

    /// The enabled tools as MCP lists them.
    pub fn tools(&self) -> Vec<McpToolInfo> {
        self.enabled.iter().map(|n| info(n)).collect()
    }

    /// Whether a built-in only reads (MCP `readOnlyHint`).
    pub fn is_read_only(name: &str) -> bool {
        matches!(name, "read_file" | "list_dir" | "web_fetch")
    }

    /// Runs `tool`. Err only for a tool that is not enabled; a failing
    /// call is an error result the model reads.
    pub async fn call(
        &self,
        tool: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, String> {
        if !self.enabled.iter().any(|n| n == tool) {
            return Err(format!(
                "built-in tool '{tool}' is not enabled on this gateway"
            ));
        }
        let outcome = match (tool, &self.roots) {
            ("shell", _) => match &self.shell {
                Some(s) => s.run(arguments, cancel).await.map(|(text, failed)| {
                    if failed {
                        ToolResult::error(text)
                    } else {
                        ToolResult::ok(text)
                    }
                }),
                None => Err("shell is not available".to_owned()),
            },
            ("web_fetch", _) => match &self.fetch {
                Some(f) => f.run(arguments, cancel).await.map(ToolResult::ok),
                None => Err("web_fetch is not available".to_owned()),
            },
            ("read_file", Some(r)) => files::read_file(r, self.max_read, arguments)
                .await
                .map(ToolResult::ok),
            ("write_file", Some(r)) => files::write_file(r, arguments).await.map(ToolResult::ok),
            ("edit_file", Some(r)) => files::edit_file(r, arguments).await.map(ToolResult::ok),
            ("list_dir", Some(r)) => files::list_dir(r, arguments).await.map(ToolResult::ok),
            _ => Err(format!(
                "built-in tool '{tool}' has no directories configured"
            )),
        };
        Ok(outcome.unwrap_or_else(|e| ToolResult::error(format!("Error: {e}"))))
    }
}

fn info(name: &str) -> McpToolInfo {
    let (description, schema) = match name {
        "shell" => (
            "Run one shell command line (sh -c) in a sandbox whose working directory is the work directory. Returns the exit status, stdout and stderr.",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The command line, e.g. `wc -l README.md`."},
                "timeout_ms": {"type": "integer", "description": "Optional, lower than the gateway's limit."}
            }, "required": ["command"], "additionalProperties": false}),
        ),
        "read_file" => (
            "Read a text file. Relative paths start at the work directory.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}
            }, "required": ["path"], "additionalProperties": false}),
        ),
        "write_file" => (
            "Create or overwrite a text file with the given content.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"}
            }, "required": ["path", "content"], "additionalProperties": false}),
        ),
        "edit_file" => (
            "Replace one exact, unique span of text in a file (old_string must occur exactly once).",
            json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"}
            }, "required": ["path", "old_string", "new_string"], "additionalProperties": false}),
        ),
        "list_dir" => (
            "List a directory (default: the work directory). Directories end in '/'.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}
            }, "additionalProperties": false}),
        ),
        _ => (
            "Fetch a web page or document by HTTP(S) GET and return it as text (HTML reduced to readable text).",
            json!({"type": "object", "properties": {
                "url": {"type": "string"}
            }, "required": ["url"], "additionalProperties": false}),
        ),
    };
    let read_only = Builtins::is_read_only(name);
    McpToolInfo {
        name: name.to_owned(),
        description: Some(description.to_owned()),
        input_schema: schema,
        annotations: Some(annotations(name, read_only)),
    }
}

fn annotations(name: &str, read_only: bool) -> Value {
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": matches!(name, "shell" | "write_file" | "edit_file"),
        "openWorldHint": name == "web_fetch",
    })
}

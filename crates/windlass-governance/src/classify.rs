//! What a tool does, as far as governance is concerned: read, write, run a
//! command, reach the network, or something the caller owns.

use windlass_engine::{ServerRunType, ToolDefinition, ToolOrigin};

/// The reserved MCP server label of Windlass's built-in tools.
pub const BUILTIN_LABEL: &str = "windlass";

/// Where read-only hints of MCP tools come from (their `readOnlyHint`
/// annotation, as the hub last listed it).
pub trait ToolHints: Send + Sync {
    /// `Some(true)` when the server marks `tool` read-only.
    fn read_only(&self, server_label: &str, tool: &str) -> Option<bool>;
}

/// The built-in tools by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Shell,
    ReadFile,
    WriteFile,
    EditFile,
    ListDir,
    WebFetch,
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "shell" => Builtin::Shell,
            "read_file" => Builtin::ReadFile,
            "write_file" => Builtin::WriteFile,
            "edit_file" => Builtin::EditFile,
            "list_dir" => Builtin::ListDir,
            "web_fetch" => Builtin::WebFetch,
            _ => return None,
        })
    }
}

/// A call's effect class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only (file reads, listings, fetches, MCP `readOnlyHint`).
    Read,
    /// Changes state (file writes, any MCP tool not marked read-only).
    Write,
    /// Runs a command.
    Exec,
    /// A function tool: the client's or the SDK program's own code, outside
    /// the autonomy level (scopes and rate limits still apply).
    Own,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Exec => "exec",
            Effect::Own => "own",
        }
    }
}

/// A call's tool, resolved for the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The model-visible name.
    pub name: String,
    /// `(server label, tool)` for MCP tools (the built-ins included).
    pub mcp: Option<(String, String)>,
    pub builtin: Option<Builtin>,
    pub effect: Effect,
}

pub fn classify(name: &str, def: Option<&ToolDefinition>, hints: Option<&dyn ToolHints>) -> Target {
    let mcp = match def.map(|d| &d.origin) {
        Some(ToolOrigin::Mcp { server_label, name }) => Some((server_label.clone(), name.clone())),
        _ => None,
    };
    let builtin = mcp
        .as_ref()
        .filter(|(label, _)| label == BUILTIN_LABEL)
        .and_then(|(_, tool)| Builtin::from_name(tool));
    let effect = match (&mcp, builtin, def.map(|d| &d.origin)) {
        (_, Some(Builtin::Shell), _) => Effect::Exec,
        (_, Some(Builtin::WriteFile | Builtin::EditFile), _) => Effect::Write,
        (_, Some(_), _) => Effect::Read,
        (Some((label, tool)), None, _) => match hints.and_then(|h| h.read_only(label, tool)) {
            Some(true) => Effect::Read,
            _ => Effect::Write,
        },
        (None, None, Some(ToolOrigin::Function)) => Effect::Own,
        // `shell` / `apply_patch` the gateway runs in its sandbox.
        (None, None, Some(ToolOrigin::ServerRun(ServerRunType::Shell))) => Effect::Exec,
        // A gateway tool or an unknown one: assume the worst.
        _ => Effect::Write,
    };
    Target {
        name: name.to_owned(),
        mcp,
        builtin,
        effect,
    }
}

/// Whether a scope entry covers the target: a server label, `label/tool`,
/// or the model-visible name.
pub fn in_scope(scopes: &[String], target: &Target) -> bool {
    scopes.iter().any(|s| {
        s == &target.name
            || target.mcp.as_ref().is_some_and(|(label, tool)| {
                s == label
                    || s.split_once('/')
                        .is_some_and(|(l, t)| l == label && t == tool)
            })
    })
}

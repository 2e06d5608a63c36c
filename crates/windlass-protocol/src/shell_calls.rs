//! OpenAI's shell tools, which the client runs (or, by operator choice,
//! Windlass in its sandbox): `shell` with its `shell_call` /
//! `shell_call_output` items, and the older `local_shell` with
//! `local_shell_call` / `local_shell_call_output`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::callers::{AllowedCaller, Caller};
use crate::containers::ContainerSettings;
use crate::item_status::ItemStatus;
use crate::open_enum::open_enum;

/// `{"type": "shell", "environment": ...}` in `tools`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ShellTool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<ShellEnvironment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_callers: Option<Vec<AllowedCaller>>,
}

open_enum! {
    /// Where a `shell` tool's commands run: the client's machine (`local`),
    /// a new container, or an existing one.
    pub enum ShellEnvironment {
        "local" => Local(LocalEnvironment),
        "container_auto" => ContainerAuto(ContainerSettings),
        "container_reference" => ContainerReference(ContainerReference),
    }
}

impl ShellEnvironment {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("shell environment is missing `type`".into())
    }
}

/// `{"type": "local"}`: the client's machine runs the commands.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LocalEnvironment {
    /// OpenAI's local skills; kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<Value>>,
}

/// `{"type": "container_reference"}`: an existing container runs the commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ContainerReference {
    pub container_id: String,
}

/// The `shell_call` item: commands for the environment to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ShellCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub action: ShellAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<ShellEnvironment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// The commands of a `shell_call`, run in order, and their limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ShellAction {
    pub commands: Vec<String>,
    /// Characters of combined stdout and stderr to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The `shell_call_output` item: one chunk per command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ShellCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub output: Vec<ShellOutputChunk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// What one command printed and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ShellOutputChunk {
    pub stdout: String,
    pub stderr: String,
    pub outcome: ShellOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// How a shell command ended: timed out, or exited with a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ShellOutcome {
    Timeout,
    Exit { exit_code: i32 },
}

/// `{"type": "local_shell"}` in `tools`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LocalShellTool {}

/// The `local_shell_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct LocalShellCall {
    pub id: String,
    pub call_id: String,
    pub action: LocalShellAction,
    pub status: ItemStatus,
}

/// `{"type": "exec", "command": [...], "env": {...}, ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct LocalShellAction {
    #[serde(rename = "type")]
    pub kind: ExecTag,
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
}

/// The only `local_shell_call` action type, `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ExecTag {
    #[default]
    Exec,
}

/// The `local_shell_call_output` item. OpenAI's SDK types name the call by
/// `id` (the call's `call_id`); clients that send `call_id` instead are
/// read too. `output` is a JSON string of the command's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct LocalShellCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

impl LocalShellCallOutput {
    /// The `call_id` of the call this answers.
    pub fn answered_call(&self) -> Option<&str> {
        self.call_id.as_deref().or(self.id.as_deref())
    }
}

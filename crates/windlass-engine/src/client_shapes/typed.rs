//! OpenAI's client-executed tool types (`shell`, `local_shell`,
//! `apply_patch`, `computer_use_preview`) as the model sees them: plain
//! functions named after the type. A call goes back to the client as the
//! type's own item (`shell_call`, `local_shell_call`, `apply_patch_call`,
//! `computer_call`), and the client's `*_output` item (or a plain
//! `function_call_output`, as Codex sends for `local_shell_call`) becomes
//! the function's output for the model.
//!
//! The model's arguments are parsed into the typed item when the call
//! closes. Arguments that do not parse cannot make a valid typed item: the
//! call then goes back as a plain `function_call` named after the type,
//! with the model's raw arguments, so the client sees exactly what the model
//! asked for.

use serde_json::{json, Map, Value};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ApplyPatchCall, ApplyPatchCallStatus, ApplyPatchOperation, ComputerAction, ComputerCall,
    ComputerUsePreviewTool, ExecTag, FunctionCall, Item, ItemStatus, LocalShellAction,
    LocalShellCall, ShellAction, ShellCall, ShellEnvironment, ShellTool, Tool,
};

use super::ClientShape;
use crate::error::EngineError;
use crate::ports::agent::tools::{ToolDefinition, ToolOrigin};

/// Which of OpenAI's client-executed types a model-visible tool stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypedKind {
    /// `shell`: a shell command the client runs.
    Shell,
    /// `local_shell`: the older shell type, a command as an argument vector.
    LocalShell,
    /// `apply_patch`: file edits the client applies.
    ApplyPatch,
    /// `computer_use_preview`: screen actions the client performs.
    Computer,
}

impl TypedKind {
    /// The tool type, which is also the model-visible function name.
    pub fn type_name(self) -> &'static str {
        match self {
            TypedKind::Shell => "shell",
            TypedKind::LocalShell => "local_shell",
            TypedKind::ApplyPatch => "apply_patch",
            TypedKind::Computer => "computer_use_preview",
        }
    }
}

/// The model-visible definition of `tools[i]` when it is one of the
/// client-executed types; `Ok(None)` for any other tool.
pub fn typed_definition(
    tool: &Tool,
    i: usize,
) -> Result<Option<(ToolDefinition, ClientShape)>, EngineError> {
    let (kind, description, parameters) = match tool {
        Tool::Shell(t) => {
            check_shell_environment(t, i)?;
            (TypedKind::Shell, SHELL_DOC.to_owned(), shell_schema())
        }
        Tool::LocalShell(_) => (
            TypedKind::LocalShell,
            LOCAL_SHELL_DOC.to_owned(),
            local_shell_schema(),
        ),
        Tool::ApplyPatch(_) => (
            TypedKind::ApplyPatch,
            APPLY_PATCH_DOC.to_owned(),
            apply_patch_schema(),
        ),
        Tool::ComputerUsePreview(t) => (TypedKind::Computer, computer_doc(t), computer_schema()),
        _ => return Ok(None),
    };
    let def = ToolDefinition {
        name: kind.type_name().to_owned(),
        description: Some(description),
        parameters,
        strict: None,
        origin: ToolOrigin::Function,
    };
    Ok(Some((def, ClientShape::Typed(kind))))
}

/// A `shell` tool whose commands OpenAI would run in one of its containers
/// cannot be handed to the client: the client asked for a hosted container.
fn check_shell_environment(t: &ShellTool, i: usize) -> Result<(), EngineError> {
    match &t.environment {
        None | Some(ShellEnvironment::Local(_)) => Ok(()),
        Some(_) => Err(EngineError::invalid_code(
            "A shell tool with a container environment needs the gateway to run shell commands; \
             this gateway hands shell calls to the client (use environment {\"type\": \"local\"}).",
            Some(&format!("tools[{i}].environment")),
            "unsupported_tool_type",
        )),
    }
}

const SHELL_DOC: &str = "Run shell command lines on the user's machine, in order. \
Returns each command's exit status, stdout and stderr.";
const LOCAL_SHELL_DOC: &str = "Run one command (an argv array, e.g. [\"bash\", \"-lc\", \"ls\"]) \
on the user's machine and get its output.";
const APPLY_PATCH_DOC: &str = "Create, update or delete one file. For create_file, `diff` holds \
the new file's lines, each starting with '+'. For update_file, `diff` is a V4A diff: hunks \
starting with '@@' (optionally followed by a line to anchor on), with context lines starting \
with ' ', removed lines with '-' and added lines with '+'. delete_file takes no diff.";

fn computer_doc(t: &ComputerUsePreviewTool) -> String {
    let env = serde_json::to_value(t.environment)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!(
        "Control a {env} computer whose display is {}x{} pixels: one UI action per call \
         (click, double_click, drag, keypress, move, screenshot, scroll, type, wait). \
         The result is a screenshot after the action.",
        t.display_width, t.display_height
    )
}

fn shell_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "commands": {"type": "array", "items": {"type": "string"},
                         "description": "Command lines, run one after another."},
            "timeout_ms": {"type": "integer", "description": "Optional limit per command."},
            "max_output_length": {"type": "integer",
                                  "description": "Optional limit on the output characters kept."}
        },
        "required": ["commands"]
    })
}

fn local_shell_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"},
                        "description": "The program and its arguments."},
            "env": {"type": "object", "additionalProperties": {"type": "string"},
                    "description": "Extra environment variables."},
            "workdir": {"type": "string", "description": "The working directory."},
            "timeout_ms": {"type": "integer", "description": "Optional time limit."}
        },
        "required": ["command"]
    })
}

fn apply_patch_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
            "path": {"type": "string", "description": "The file, relative to the workspace root."},
            "diff": {"type": "string", "description": "The V4A diff (not for delete_file)."}
        },
        "required": ["type", "path"]
    })
}

fn computer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["click", "double_click", "drag", "keypress",
                             "move", "screenshot", "scroll", "type", "wait"]},
                    "x": {"type": "integer"},
                    "y": {"type": "integer"},
                    "button": {"type": "string",
                               "enum": ["left", "right", "wheel", "back", "forward"]},
                    "text": {"type": "string", "description": "For type."},
                    "keys": {"type": "array", "items": {"type": "string"},
                             "description": "For keypress."},
                    "scroll_x": {"type": "integer"},
                    "scroll_y": {"type": "integer"},
                    "path": {"type": "array", "description": "For drag: points {x, y}.",
                             "items": {"type": "object",
                                       "properties": {"x": {"type": "integer"},
                                                      "y": {"type": "integer"}}}}
                },
                "required": ["type"]
            }
        },
        "required": ["action"]
    })
}

/// The item a typed call is gathered in while its arguments stream: a
/// function call that is never announced in this form (it becomes the typed
/// item, or stays a function call if its arguments do not parse).
pub fn gathering_item(kind: TypedKind, call_id: String) -> Item {
    Item::FunctionCall(FunctionCall {
        id: None,
        call_id,
        name: kind.type_name().to_owned(),
        arguments: String::new(),
        namespace: None,
        status: Some(ItemStatus::InProgress),
    })
}

/// The finished item of a typed call from the model's arguments, or `Err`
/// with why they do not make one.
pub fn typed_item(
    kind: TypedKind,
    call_id: String,
    arguments: &str,
    status: ItemStatus,
) -> Result<Item, String> {
    let args: Map<String, Value> =
        serde_json::from_str(arguments).map_err(|e| format!("arguments are not an object: {e}"))?;
    Ok(match kind {
        TypedKind::Shell => Item::ShellCall(ShellCall {
            id: Some(new_id(prefix::SHELL_CALL)),
            call_id,
            action: shell_action(&args)?,
            status: Some(status),
            environment: None,
            caller: None,
            created_by: None,
        }),
        TypedKind::LocalShell => Item::LocalShellCall(LocalShellCall {
            id: new_id(prefix::LOCAL_SHELL_CALL),
            call_id,
            action: local_shell_action(&args)?,
            status,
        }),
        TypedKind::ApplyPatch => Item::ApplyPatchCall(ApplyPatchCall {
            id: Some(new_id(prefix::APPLY_PATCH_CALL)),
            call_id,
            operation: patch_operation(args)?,
            status: match status {
                ItemStatus::Completed => ApplyPatchCallStatus::Completed,
                _ => ApplyPatchCallStatus::InProgress,
            },
            caller: None,
            created_by: None,
        }),
        TypedKind::Computer => {
            let (action, actions) = computer_actions(args)?;
            Item::ComputerCall(ComputerCall {
                id: new_id(prefix::COMPUTER_CALL),
                call_id,
                action,
                actions,
                pending_safety_checks: Vec::new(),
                status,
            })
        }
    })
}

fn strings(v: &Value, field: &str) -> Result<Vec<String>, String> {
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{field}` must be an array of strings")),
        _ => Err(format!("`{field}` must be an array of strings")),
    }
}

fn opt_u64(args: &Map<String, Value>, field: &str) -> Result<Option<u64>, String> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("`{field}` must be a non-negative integer")),
    }
}

fn shell_action(args: &Map<String, Value>) -> Result<ShellAction, String> {
    let commands = args
        .get("commands")
        .ok_or("`commands` is missing")
        .and_then(|v| {
            strings(v, "commands").map_err(|_| "`commands` must be an array of strings")
        })?;
    if commands.is_empty() {
        return Err("`commands` is empty".to_owned());
    }
    Ok(ShellAction {
        commands,
        max_output_length: opt_u64(args, "max_output_length")?,
        timeout_ms: opt_u64(args, "timeout_ms")?,
    })
}

fn local_shell_action(args: &Map<String, Value>) -> Result<LocalShellAction, String> {
    let command = strings(
        args.get("command").ok_or("`command` is missing")?,
        "command",
    )?;
    if command.is_empty() {
        return Err("`command` is empty".to_owned());
    }
    let env = match args.get("env") {
        None | Some(Value::Null) => Default::default(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|_| "`env` must map names to strings".to_owned())?,
    };
    let workdir = match args
        .get("workdir")
        .or_else(|| args.get("working_directory"))
    {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("`workdir` must be a string".to_owned()),
    };
    Ok(LocalShellAction {
        kind: ExecTag::Exec,
        command,
        env,
        timeout_ms: opt_u64(args, "timeout_ms")?,
        user: None,
        working_directory: workdir,
    })
}

/// `{type, path, diff}`, or the same nested under `operation` (the item's
/// own shape).
fn patch_operation(mut args: Map<String, Value>) -> Result<ApplyPatchOperation, String> {
    if let Some(Value::Object(op)) = args.remove("operation") {
        args = op;
    }
    let op: ApplyPatchOperation = serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("not an apply_patch operation: {e}"))?;
    if op.path().is_empty() {
        return Err("`path` is empty".to_owned());
    }
    Ok(op)
}

type Actions = (Option<ComputerAction>, Option<Vec<ComputerAction>>);

/// `{action: {...}}`, `{actions: [...]}` or the action itself.
fn computer_actions(mut args: Map<String, Value>) -> Result<Actions, String> {
    let known = |a: ComputerAction| match a {
        ComputerAction::Unknown(raw) => Err(format!("unknown computer action {raw}")),
        a => Ok(a),
    };
    let parse = |v: Value| {
        serde_json::from_value::<ComputerAction>(v)
            .map_err(|e| format!("not a computer action: {e}"))
            .and_then(known)
    };
    if let Some(Value::Array(list)) = args.remove("actions") {
        let actions = list.into_iter().map(parse).collect::<Result<Vec<_>, _>>()?;
        return Ok((None, Some(actions)));
    }
    let action = match args.remove("action") {
        Some(v) => v,
        None => Value::Object(args),
    };
    Ok((Some(parse(action)?), None))
}

/// A typed call as the upstream sees it: the function call the model made,
/// with arguments rebuilt from the item (the same fields it gave).
pub fn upstream_call(item: &Item) -> Option<FunctionCall> {
    let (kind, id, call_id, arguments, status) = match item {
        Item::ShellCall(c) => {
            let mut args = json!({"commands": c.action.commands});
            put(&mut args, "timeout_ms", c.action.timeout_ms);
            put(&mut args, "max_output_length", c.action.max_output_length);
            (TypedKind::Shell, c.id.clone(), &c.call_id, args, c.status)
        }
        Item::LocalShellCall(c) => {
            let mut args = json!({"command": c.action.command});
            if !c.action.env.is_empty() {
                args["env"] = json!(c.action.env);
            }
            put(&mut args, "workdir", c.action.working_directory.clone());
            put(&mut args, "timeout_ms", c.action.timeout_ms);
            let id = Some(c.id.clone());
            (TypedKind::LocalShell, id, &c.call_id, args, Some(c.status))
        }
        Item::ApplyPatchCall(c) => {
            let args = serde_json::to_value(&c.operation).unwrap_or(Value::Null);
            let status = Some(match c.status {
                ApplyPatchCallStatus::Completed => ItemStatus::Completed,
                ApplyPatchCallStatus::InProgress => ItemStatus::InProgress,
            });
            (
                TypedKind::ApplyPatch,
                c.id.clone(),
                &c.call_id,
                args,
                status,
            )
        }
        Item::ComputerCall(c) => {
            let args = match (&c.action, &c.actions) {
                (_, Some(list)) => json!({ "actions": list }),
                (action, None) => json!({ "action": action }),
            };
            let id = Some(c.id.clone());
            (TypedKind::Computer, id, &c.call_id, args, Some(c.status))
        }
        _ => return None,
    };
    Some(FunctionCall {
        id,
        call_id: call_id.clone(),
        name: kind.type_name().to_owned(),
        arguments: arguments.to_string(),
        namespace: None,
        status,
    })
}

fn put<T: serde::Serialize>(args: &mut Value, field: &str, value: Option<T>) {
    if let Some(v) = value {
        args[field] = json!(v);
    }
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;

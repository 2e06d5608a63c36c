//! The request's tools and `tool_choice`, checked and resolved.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;
use windlass_protocol::{
    CreateResponseRequest, Tool, ToolChoice, ToolChoiceMode, ToolChoiceObject,
};

use crate::client_shapes;
use crate::error::EngineError;
use crate::mcp::declare::{declare, McpServerDecl};
use crate::ports::provider::ModelToolChoice;
use crate::ports::tools::{ToolDefinition, ToolExecutor, ToolOrigin};
use crate::tooling::ToolSet;
use crate::upstream::mcp_tool_name;

/// What prepare learns from `tools`, `tool_choice` and `allowed_tools`.
pub struct ResolvedTools {
    pub set: ToolSet,
    /// `tool_choice` for the first model turn.
    pub first_choice: ModelToolChoice,
    /// `tool_choice: none`: calls are returned, never run (FR-006).
    pub choice_none: bool,
    /// The request's MCP servers; their tools are added once listed.
    pub mcp: Vec<McpServerDecl>,
}

pub fn resolve_tools(
    req: &CreateResponseRequest,
    executors: &[Arc<dyn ToolExecutor>],
    mcp_enabled: bool,
) -> Result<ResolvedTools, EngineError> {
    let mut defs = Vec::new();
    let mut names = HashSet::new();
    let mut mcp = Vec::new();
    let mut labels = HashSet::new();
    let mut shapes = Vec::new();
    for (i, tool) in req.tools.iter().flatten().enumerate() {
        match tool {
            Tool::Function(f) => {
                if f.name.is_empty() || !valid_name(&f.name) {
                    return Err(EngineError::invalid(
                        format!(
                            "Invalid tool name '{}': use letters, digits, '_' or '-', at most 64 characters.",
                            f.name
                        ),
                        Some(format!("tools[{i}].name")),
                    ));
                }
                if !names.insert(f.name.clone()) {
                    return Err(EngineError::invalid(
                        format!("Duplicate tool name '{}'.", f.name),
                        Some(format!("tools[{i}].name")),
                    ));
                }
                defs.push(ToolDefinition {
                    name: f.name.clone(),
                    description: f.description.clone(),
                    parameters: f
                        .parameters
                        .clone()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                    strict: f.strict,
                    origin: ToolOrigin::Function,
                });
            }
            Tool::Mcp(m) if mcp_enabled => mcp.push(declare(m, i, &mut labels)?),
            Tool::Mcp(_) => {
                return Err(EngineError::invalid_code(
                    "mcp tools are not enabled on this gateway",
                    Some(&format!("tools[{i}]")),
                    "unsupported_tool_type",
                ))
            }
            Tool::Namespace(ns) => {
                for (def, shape) in client_shapes::namespace_definitions(ns, i)? {
                    client_shapes::insert_unique(&mut names, &def, format!("tools[{i}]"))?;
                    shapes.push((def.name.clone(), shape));
                    defs.push(def);
                }
            }
            Tool::Custom(c) => {
                let (def, shape) = client_shapes::custom_tool(c, i)?;
                client_shapes::insert_unique(&mut names, &def, format!("tools[{i}].name"))?;
                shapes.push((def.name.clone(), shape));
                defs.push(def);
            }
            // OpenAI runs these itself; they are not offered to the model
            // (prepare logs them) and stay in the response's `tools`.
            Tool::Unknown(_) if tool.is_hosted() => {}
            Tool::Unknown(_) => {
                return Err(EngineError::invalid_code(
                    format!("Tool type '{}' is not supported.", tool.type_name()),
                    Some(&format!("tools[{i}].type")),
                    "unsupported_tool_type",
                ))
            }
        }
    }

    // MCP tools are only known once listed; a name qualified with a
    // declared server's label may refer to one.
    let known = Known {
        names: &names,
        prefixes: mcp
            .iter()
            .map(|d| mcp_tool_name(&d.server.label, ""))
            .collect(),
    };
    let mut allowed: Option<HashSet<String>> = None;
    if let Some(list) = &req.allowed_tools {
        check_names(list.iter().map(String::as_str), &known, "allowed_tools")?;
        // An empty list means no restriction (FR-010).
        if !list.is_empty() {
            allowed = Some(list.iter().cloned().collect());
        }
    }

    let (first_choice, choice_none) = match req.tool_choice.as_ref() {
        None | Some(ToolChoice::Mode(ToolChoiceMode::Auto)) => (ModelToolChoice::Auto, false),
        Some(ToolChoice::Mode(ToolChoiceMode::None)) => (ModelToolChoice::None, true),
        Some(ToolChoice::Mode(ToolChoiceMode::Required)) => (ModelToolChoice::Required, false),
        Some(ToolChoice::Object(ToolChoiceObject::Function(f))) => {
            check_names([f.name.as_str()], &known, "tool_choice.name")?;
            (ModelToolChoice::Function(f.name.clone()), false)
        }
        Some(ToolChoice::Object(ToolChoiceObject::Mcp(m))) => {
            if !labels.contains(&m.server_label) {
                return Err(EngineError::invalid(
                    format!(
                        "MCP server '{}' is not among the request's tools.",
                        m.server_label
                    ),
                    Some("tool_choice.server_label".to_owned()),
                ));
            }
            match &m.name {
                Some(name) => (
                    ModelToolChoice::Function(mcp_tool_name(&m.server_label, name)),
                    false,
                ),
                None => (ModelToolChoice::Required, false),
            }
        }
        Some(ToolChoice::Object(ToolChoiceObject::AllowedTools(a))) => {
            let mut list = HashSet::new();
            for t in &a.tools {
                match t {
                    ToolChoiceObject::Function(f) => {
                        list.insert(f.name.clone());
                    }
                    other => {
                        return Err(EngineError::invalid(
                            format!(
                                "allowed_tools entries of type '{}' are not supported",
                                other.type_name()
                            ),
                            Some("tool_choice.tools".to_owned()),
                        ))
                    }
                }
            }
            check_names(list.iter().map(String::as_str), &known, "tool_choice.tools")?;
            allowed = Some(match allowed {
                Some(prev) => prev.intersection(&list).cloned().collect(),
                None => list,
            });
            match a.mode {
                ToolChoiceMode::None => (ModelToolChoice::None, true),
                ToolChoiceMode::Auto => (ModelToolChoice::Auto, false),
                ToolChoiceMode::Required => (ModelToolChoice::Required, false),
            }
        }
        Some(ToolChoice::Object(other)) => {
            return Err(EngineError::invalid(
                format!(
                    "tool_choice of type '{}' is not supported",
                    other.type_name()
                ),
                Some("tool_choice".to_owned()),
            ))
        }
    };
    if defs.is_empty() && mcp.is_empty() && matches!(first_choice, ModelToolChoice::Required) {
        return Err(EngineError::invalid(
            "tool_choice 'required' needs at least one tool",
            Some("tool_choice".to_owned()),
        ));
    }
    Ok(ResolvedTools {
        set: ToolSet::new(defs, executors, allowed).with_shapes(shapes),
        first_choice,
        choice_none,
        mcp,
    })
}

/// Tool names a request may refer to before its MCP servers are listed.
struct Known<'a> {
    names: &'a HashSet<String>,
    /// `label__` of each declared MCP server.
    prefixes: Vec<String>,
}

impl Known<'_> {
    fn contains(&self, name: &str) -> bool {
        self.names.contains(name) || self.prefixes.iter().any(|p| name.starts_with(p.as_str()))
    }
}

fn check_names<'a>(
    list: impl IntoIterator<Item = &'a str>,
    known: &Known<'_>,
    param: &str,
) -> Result<(), EngineError> {
    for name in list {
        if !known.contains(name) {
            return Err(EngineError::invalid(
                format!("Tool '{name}' is not among the request's tools."),
                Some(param.to_owned()),
            ));
        }
    }
    Ok(())
}

/// The character set chat-completions servers accept for function names.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

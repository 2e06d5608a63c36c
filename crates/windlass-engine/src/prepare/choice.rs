//! The request's `tool_choice`: what the first model turn is told, and the
//! tools an `allowed_tools` choice restricts the response to.

use std::collections::HashSet;

use windlass_protocol::{CreateResponseRequest, ToolChoice, ToolChoiceMode, ToolChoiceObject};

use super::known::{check_names, Known};
use crate::error::EngineError;
use crate::naming::mcp_tool_name;
use crate::ports::agent::provider::ModelToolChoice;

pub(super) struct Choice {
    /// `tool_choice` for the first model turn.
    pub first: ModelToolChoice,
    /// `tool_choice: none`: calls are returned, never run.
    pub none: bool,
    /// Tools an `allowed_tools` choice permits.
    pub allowed: Option<HashSet<String>>,
}

fn mode(first: ModelToolChoice, none: bool) -> Choice {
    Choice {
        first,
        none,
        allowed: None,
    }
}

pub(super) fn resolve_choice(
    req: &CreateResponseRequest,
    known: &Known<'_>,
    labels: &HashSet<String>,
) -> Result<Choice, EngineError> {
    Ok(match req.tool_choice.as_ref() {
        None | Some(ToolChoice::Mode(ToolChoiceMode::Auto)) => mode(ModelToolChoice::Auto, false),
        Some(ToolChoice::Mode(ToolChoiceMode::None)) => mode(ModelToolChoice::None, true),
        Some(ToolChoice::Mode(ToolChoiceMode::Required)) => mode(ModelToolChoice::Required, false),
        Some(ToolChoice::Object(ToolChoiceObject::Function(f))) => {
            check_names([f.name.as_str()], known, "tool_choice.name")?;
            mode(ModelToolChoice::Function(f.name.clone()), false)
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
                Some(name) => mode(
                    ModelToolChoice::Function(mcp_tool_name(&m.server_label, name)),
                    false,
                ),
                None => mode(ModelToolChoice::Required, false),
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
            check_names(list.iter().map(String::as_str), known, "tool_choice.tools")?;
            let (first, none) = match a.mode {
                ToolChoiceMode::None => (ModelToolChoice::None, true),
                ToolChoiceMode::Auto => (ModelToolChoice::Auto, false),
                ToolChoiceMode::Required => (ModelToolChoice::Required, false),
            };
            Choice {
                first,
                none,
                allowed: Some(list),
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
    })
}

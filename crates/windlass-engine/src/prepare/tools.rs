//! The request's tools and `tool_choice`, checked and resolved.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::{CreateResponseRequest, Tool};

use super::choice::resolve_choice;
use super::known::{check_names, Known};
use crate::client_shapes;
use crate::error::EngineError;
use crate::hosted;
use crate::mcp::declare::{declare, McpServerDecl};
use crate::naming::{mcp_tool_name, valid_name};
use crate::ports::agent::provider::ModelToolChoice;
use crate::ports::agent::tools::{ToolDefinition, ToolExecutor, ToolOrigin};
use crate::tooling::ToolSet;

/// What prepare learns from `tools`, `tool_choice` and `allowed_tools`.
pub(super) struct ResolvedTools {
    pub set: ToolSet,
    /// `tool_choice` for the first model turn.
    pub first_choice: ModelToolChoice,
    /// `tool_choice: none`: calls are returned, never run.
    pub choice_none: bool,
    /// The request's MCP servers; their tools are added once listed.
    pub mcp: Vec<McpServerDecl>,
    /// Hosted tool types left out: nothing serves them here.
    pub dropped: Vec<String>,
}

pub(super) fn resolve_tools(
    req: &CreateResponseRequest,
    executors: &[Arc<dyn ToolExecutor>],
    mcp_enabled: bool,
    drop_unserved: &[String],
) -> Result<ResolvedTools, EngineError> {
    let declared = declare_tools(req, mcp_enabled, executors, drop_unserved)?;
    // MCP tools are only known once listed; a name qualified with a
    // declared server's label may refer to one.
    let known = Known {
        names: &declared.names,
        prefixes: declared
            .mcp
            .iter()
            .map(|d| mcp_tool_name(&d.server.label, ""))
            .collect(),
    };
    let mut allowed = allowed_list(req, &known)?;
    let choice = resolve_choice(req, &known, &declared.labels)?;
    if let Some(list) = choice.allowed {
        allowed = Some(match allowed {
            Some(prev) => prev.intersection(&list).cloned().collect(),
            None => list,
        });
    }
    if declared.defs.is_empty()
        && declared.mcp.is_empty()
        && matches!(choice.first, ModelToolChoice::Required)
    {
        return Err(EngineError::invalid(
            "tool_choice 'required' needs at least one tool",
            Some("tool_choice".to_owned()),
        ));
    }
    let mut set = ToolSet::new(declared.defs, executors, allowed).with_shapes(declared.shapes);
    set.add_executor_tools(executors);
    Ok(ResolvedTools {
        set,
        first_choice: choice.first,
        choice_none: choice.none,
        mcp: declared.mcp,
        dropped: declared.dropped,
    })
}

/// The request's own tools: function definitions and MCP servers.
struct Declared {
    defs: Vec<ToolDefinition>,
    names: HashSet<String>,
    mcp: Vec<McpServerDecl>,
    labels: HashSet<String>,
    /// Client tools the model sees in another shape (namespace, custom).
    shapes: Vec<(String, client_shapes::ClientShape)>,
    dropped: Vec<String>,
}

fn declare_tools(
    req: &CreateResponseRequest,
    mcp_enabled: bool,
    executors: &[Arc<dyn ToolExecutor>],
    drop_unserved: &[String],
) -> Result<Declared, EngineError> {
    let mut d = Declared {
        defs: Vec::new(),
        names: HashSet::new(),
        mcp: Vec::new(),
        labels: HashSet::new(),
        shapes: Vec::new(),
        dropped: Vec::new(),
    };
    for (i, tool) in req.tools.iter().flatten().enumerate() {
        // Hosted types the gateway runs: offered as functions of their
        // executor, or refused (or left out, as the operator chose).
        if let Some(kind) = HostedKind::of_tool(tool) {
            match hosted::declare(tool, kind, i, executors, drop_unserved)? {
                hosted::Declared::Offered(def) => {
                    client_shapes::insert_unique(&mut d.names, &def, format!("tools[{i}].type"))?;
                    d.defs.push(*def);
                }
                hosted::Declared::Dropped => d.dropped.push(tool.type_name().to_owned()),
            }
            continue;
        }
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
                if !d.names.insert(f.name.clone()) {
                    return Err(EngineError::invalid(
                        format!("Duplicate tool name '{}'.", f.name),
                        Some(format!("tools[{i}].name")),
                    ));
                }
                d.defs.push(ToolDefinition {
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
            Tool::Mcp(m) if mcp_enabled => d.mcp.push(declare(m, i, &mut d.labels)?),
            Tool::Mcp(_) => {
                return Err(EngineError::invalid_code(
                    "mcp tools are not enabled on this gateway",
                    Some(&format!("tools[{i}]")),
                    "unsupported_tool_type",
                ))
            }
            Tool::Namespace(ns) => {
                for (def, shape) in client_shapes::namespace_definitions(ns, i)? {
                    client_shapes::insert_unique(&mut d.names, &def, format!("tools[{i}]"))?;
                    d.shapes.push((def.name.clone(), shape));
                    d.defs.push(def);
                }
            }
            Tool::Custom(c) => {
                let (def, shape) = client_shapes::custom_tool(c, i)?;
                client_shapes::insert_unique(&mut d.names, &def, format!("tools[{i}].name"))?;
                d.shapes.push((def.name.clone(), shape));
                d.defs.push(def);
            }
            Tool::Shell(_)
            | Tool::LocalShell(_)
            | Tool::ApplyPatch(_)
            | Tool::ComputerUsePreview(_) => {
                let typed = match client_shapes::server_run::served_definition(tool, i, executors)?
                {
                    Some(served) => Some(served),
                    None => client_shapes::typed::typed_definition(tool, i)?,
                };
                if let Some((def, shape)) = typed {
                    client_shapes::insert_unique(&mut d.names, &def, format!("tools[{i}].type"))?;
                    d.shapes.push((def.name.clone(), shape));
                    d.defs.push(def);
                }
            }
            Tool::ImageGeneration(_) => return Err(image_generation_refused(i)),
            // OpenAI's types this engine has no shape for, and unknown
            // types: refused, or left out visibly as the operator chose.
            _ => {
                hosted::unservable(tool, i, drop_unserved)?;
                d.dropped.push(tool.type_name().to_owned());
            }
        }
    }
    Ok(d)
}

/// `image_generation` needs an image-capable upstream, which this gateway
/// does not configure yet: refused rather than silently dropped.
fn image_generation_refused(i: usize) -> EngineError {
    EngineError::invalid_code(
        "Tool type 'image_generation' is not supported: this gateway has no image-generation \
         upstream configured.",
        Some(&format!("tools[{i}].type")),
        "unsupported_tool_type",
    )
}

/// The request's `allowed_tools` (an empty list means no restriction).
fn allowed_list(
    req: &CreateResponseRequest,
    known: &Known<'_>,
) -> Result<Option<HashSet<String>>, EngineError> {
    let Some(list) = &req.allowed_tools else {
        return Ok(None);
    };
    check_names(list.iter().map(String::as_str), known, "allowed_tools")?;
    Ok((!list.is_empty()).then(|| list.iter().cloned().collect()))
}

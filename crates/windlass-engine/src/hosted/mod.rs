//! Hosted tools the gateway runs in its loop (`file_search`, `web_search`,
//! `code_interpreter`): decided at prepare, offered to the model as plain
//! functions, and shown to the client as OpenAI's items.
//!
//! - [`declare`]: a request's hosted tool becomes a model-visible function
//!   owned by the executor whose `can_execute` accepts it; with none, the
//!   request is refused (400 `unsupported_tool_type`) unless the operator
//!   lets the gateway drop that type (then it is left out, and the response
//!   says so in `PreparedRun::dropped_tools`).
//! - `calls`: the call's item opens while the model streams it, runs after
//!   the turn, and is replaced by the executor's complete item.
//! - Replay (`upstream.rs`): the item goes back to the model as a function
//!   call and its output, rendered from the item alone
//!   (`windlass_protocol::hosted_replay`).

pub(crate) mod calls;
pub(crate) mod code_stream;

use std::sync::Arc;

use serde_json::{json, Value};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::Tool;

use crate::error::EngineError;
use crate::ports::agent::tools::{HostedTool, ToolDefinition, ToolExecutor, ToolOrigin};

/// What prepare makes of one hosted tool of the request.
// Short-lived (one per hosted tool at prepare): the size does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Declared {
    /// Offered to the model; an executor owns it.
    Offered(Box<ToolDefinition>),
    /// No executor, and the operator lets the gateway leave it out.
    Dropped,
}

/// The model-visible function of a hosted tool, if an executor runs it.
pub(crate) fn declare(
    tool: &Tool,
    kind: HostedKind,
    index: usize,
    executors: &[Arc<dyn ToolExecutor>],
    drop_unserved: &[String],
) -> Result<Declared, EngineError> {
    let def = definition(HostedTool {
        kind,
        index,
        tool: tool.clone(),
    });
    if executors.iter().any(|e| e.can_execute(&def)) {
        return Ok(Declared::Offered(Box::new(def)));
    }
    if may_drop(drop_unserved, kind) {
        return Ok(Declared::Dropped);
    }
    Err(EngineError::invalid_code(
        format!(
            "Tool type '{}' is not available on this gateway: {}",
            tool.type_name(),
            what_to_configure(kind)
        ),
        Some(&format!("tools[{index}].type")),
        "unsupported_tool_type",
    ))
}

/// Whether an unserved hosted type may be left out (`*`: every one). A
/// `web_search` entry covers the preview type and the dated aliases.
fn may_drop(drop_unserved: &[String], kind: HostedKind) -> bool {
    drop_unserved
        .iter()
        .any(|t| t == "*" || t == kind.function_name())
}

/// A tool type nothing here can serve: one of OpenAI's types this engine
/// has no shape for (`tool_search`, `computer`, ...) or a type it does not
/// know at all. The same rule as an unserved hosted type: refused (400
/// `unsupported_tool_type` on `tools[i].type`), or left out when the
/// operator drops every unserved type (`*`) or names this one (`Ok`: the
/// tool is dropped).
pub(crate) fn unservable(
    tool: &Tool,
    index: usize,
    drop_unserved: &[String],
) -> Result<(), EngineError> {
    let name = tool.type_name();
    if drop_unserved.iter().any(|t| t == "*" || t == name) {
        return Ok(());
    }
    let message = if tool.is_hosted() {
        format!("Tool type '{name}' is not available on this gateway: nothing here runs it.")
    } else {
        format!("Tool type '{name}' is not supported.")
    };
    Err(EngineError::invalid_code(
        message,
        Some(&format!("tools[{index}].type")),
        "unsupported_tool_type",
    ))
}

fn what_to_configure(kind: HostedKind) -> &'static str {
    match kind {
        HostedKind::FileSearch => {
            "the operator must enable file search (a store with vector stores)."
        }
        HostedKind::WebSearch => {
            "the operator must configure a search backend ([web_search] provider = searxng, brave or tavily)."
        }
        HostedKind::CodeInterpreter => {
            "the operator must enable the code interpreter ([code_interpreter] with a sandbox)."
        }
    }
}

/// The function the model sees for a hosted tool.
pub fn definition(hosted: HostedTool) -> ToolDefinition {
    let (description, parameters) = function_of(hosted.kind);
    ToolDefinition {
        name: hosted.kind.function_name().to_owned(),
        description: Some(description.to_owned()),
        parameters,
        strict: None,
        origin: ToolOrigin::Hosted(Box::new(hosted)),
    }
}

fn function_of(kind: HostedKind) -> (&'static str, Value) {
    match kind {
        HostedKind::FileSearch => (
            windlass_protocol::hosted_render::FILE_SEARCH_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "What to look for, in natural language."}},
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
        HostedKind::WebSearch => (
            "Search the web. Pass `query` to search; the results list title, URL and snippet. \
             Pass `url` (a result's URL) to read that page, or `url` and `pattern` to find text in it. \
             Cite the URLs of the results you use.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "url": {"type": "string", "description": "A page to open, from the results."},
                    "pattern": {"type": "string", "description": "Text to find in the page at `url`."}
                },
                "additionalProperties": false
            }),
        ),
        HostedKind::CodeInterpreter => (
            "Run Python code in a sandboxed container and get its printed output and the files it wrote.",
            json!({
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python code to run."}},
                "required": ["code"],
                "additionalProperties": false
            }),
        ),
    }
}

//! A Messages request -> the engine's request. Only translation and
//! Anthropic's own checks here; everything else (tools, limits, the
//! upstream's abilities) is decided by the engine's `prepare`, as for
//! `/v1/responses`.

use serde_json::Value;
use windlass_protocol::anthropic::{
    McpServer, MessagesRequest, OutputFormat, SystemPrompt, ThinkingConfig,
    ToolChoice as AnthropicChoice, ToolDefinition,
};
use windlass_protocol::{
    CreateResponseRequest, FunctionTool, Input, JsonSchemaFormat, McpAllowedTools, McpApprovalMode,
    McpRequireApproval, McpTool, ReasoningEffort, ReasoningParam, SpecificFunction, TextFormat,
    TextParam, Tool, ToolChoice, ToolChoiceMode, ToolChoiceObject,
};

use super::answer::Thinking;
use super::blocks::{invalid, messages_to_items};
use super::config::MessagesConfig;
use super::context_edits;
use super::server_tools;
use super::toolsets;
use crate::error::ApiError;

/// What the surface needs besides the engine's request.
pub(crate) struct Translated {
    pub request: CreateResponseRequest,
    /// Extended thinking was asked for: reasoning is shown as thinking
    /// blocks (their text left out with `display: "omitted"`).
    pub thinking: Thinking,
    /// The request's server tools, to name one the gateway left out.
    pub server_tools: Vec<server_tools::Declared>,
}

/// Whether the request creates a message or only counts its tokens
/// (`count_tokens` takes no `max_tokens`, `stream` or sampling fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Create,
    Count,
}

pub(crate) fn translate(
    mut req: MessagesRequest,
    config: &MessagesConfig,
    purpose: Purpose,
) -> Result<Translated, ApiError> {
    refuse_unsupported(&req)?;
    let model = required(req.model, "model")?;
    let max_tokens = match purpose {
        Purpose::Create => Some(required(req.max_tokens, "max_tokens")?),
        Purpose::Count => req.max_tokens,
    };
    if max_tokens == Some(0) {
        return Err(invalid("max_tokens", "must be greater than or equal to 1"));
    }
    let mut messages = required(req.messages, "messages")?;
    let thinking_on = matches!(
        req.thinking,
        Some(ThinkingConfig::Enabled { .. } | ThinkingConfig::Adaptive { .. })
    );
    let context_management =
        context_edits::apply(req.context_management.take(), thinking_on, &mut messages)?;
    let input = messages_to_items(messages)?;
    range("temperature", req.temperature, 1.0)?;
    range("top_p", req.top_p, 1.0)?;
    let output = req.output_config.unwrap_or_default();
    let effort = thinking_effort(req.thinking.as_ref(), output.effort.as_deref(), max_tokens)?;
    let display = req.thinking.as_ref().and_then(ThinkingConfig::display);
    if let Some(other) = display.filter(|d| !["summarized", "omitted"].contains(d)) {
        return Err(invalid(
            "thinking.display",
            format!("Input should be 'summarized' or 'omitted', not '{other}'"),
        ));
    }
    let (toolsets, defined): (Vec<_>, Vec<_>) = req
        .tools
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .partition(|(_, t)| t.kind.as_deref() == Some(toolsets::TOOLSET));
    let (server, defined): (Vec<_>, Vec<_>) = defined
        .into_iter()
        .partition(|(_, t)| t.kind.as_deref().is_some_and(server_tools::is_server_tool));
    let server = server_tools::translate(server)?;
    let mut tools = custom_tools(defined)?;
    tools.extend(server.tools);
    let declared = server.declared;
    let mut mcp = mcp_tools(req.mcp_servers.unwrap_or_default())?;
    toolsets::apply(toolsets, &mut mcp)?;
    tools.extend(mcp);
    for label in &config.mcp_servers {
        let declared = tools
            .iter()
            .any(|t| matches!(t, Tool::Mcp(m) if &m.server_label == label));
        if !declared {
            tools.push(toolsets::operator_server(label));
        }
    }
    let parallel = req
        .tool_choice
        .as_ref()
        .filter(|c| c.disable_parallel_tool_use())
        .map(|_| false);
    let request = CreateResponseRequest {
        model: Some(model),
        input: Some(Input::Items(input)),
        instructions: req.system.map(system_text),
        tool_choice: req.tool_choice.map(tool_choice),
        tools: (!tools.is_empty()).then_some(tools),
        parallel_tool_calls: parallel,
        max_tool_calls: server.max_uses,
        context_management,
        include: (!server.include.is_empty()).then_some(server.include),
        temperature: req.temperature,
        top_p: req.top_p,
        // Not counted (nothing is generated), so not checked against the
        // upstream either.
        stop: req
            .stop_sequences
            .filter(|s| !s.is_empty() && purpose == Purpose::Create),
        top_k: req.top_k.filter(|_| purpose == Purpose::Create),
        max_output_tokens: max_tokens,
        text: output
            .format
            .map(|OutputFormat::JsonSchema { schema }| TextParam {
                format: Some(TextFormat::JsonSchema(JsonSchemaFormat {
                    name: "output".to_owned(),
                    description: None,
                    schema,
                    strict: Some(true),
                })),
                verbosity: None,
            }),
        reasoning: effort.map(|effort| ReasoningParam {
            effort: Some(effort),
            summary: None,
        }),
        safety_identifier: req.metadata.and_then(|m| m.user_id),
        service_tier: req.service_tier.map(service_tier).transpose()?,
        stream: Some(purpose == Purpose::Create && req.stream == Some(true)),
        // Stateless, like Anthropic's API: kept only when the operator
        // stores Messages responses (for their traces).
        store: Some(config.store),
        ..CreateResponseRequest::default()
    };
    Ok(Translated {
        request,
        server_tools: declared,
        thinking: match (effort, display) {
            (None, _) => Thinking::Hidden,
            (Some(_), Some("omitted")) => Thinking::Omitted,
            (Some(_), _) => Thinking::Shown,
        },
    })
}

fn required<T>(value: Option<T>, field: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| invalid(field, "Field required"))
}

fn range(field: &str, value: Option<f64>, max: f64) -> Result<(), ApiError> {
    match value {
        Some(v) if !(0.0..=max).contains(&v) => Err(invalid(
            field,
            format!("Input should be between 0 and {max}"),
        )),
        _ => Ok(()),
    }
}

/// Fields this surface cannot honour yet, refused by name rather than
/// dropped (the answer would differ from what the client asked for).
fn refuse_unsupported(req: &MessagesRequest) -> Result<(), ApiError> {
    if let Some(i) = req
        .stop_sequences
        .iter()
        .flatten()
        .position(String::is_empty)
    {
        return Err(invalid(
            &format!("stop_sequences.{i}"),
            "a stop sequence must not be empty",
        ));
    }
    if req.container.is_some() {
        return Err(invalid(
            "container",
            "containers (code execution) are not available on this server",
        ));
    }
    Ok(())
}

/// `system` as the response's instructions: text blocks joined.
fn system_text(system: SystemPrompt) -> String {
    match system {
        SystemPrompt::Text(t) => t,
        SystemPrompt::Blocks(blocks) => blocks
            .into_iter()
            .filter_map(|b| b.text)
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

/// Extended thinking as a reasoning effort: a budget the inverse of how
/// the `anthropic` upstream turns an effort into a budget; adaptive
/// thinking at `output_config.effort` (medium when unset).
fn thinking_effort(
    thinking: Option<&ThinkingConfig>,
    effort: Option<&str>,
    max_tokens: Option<u64>,
) -> Result<Option<ReasoningEffort>, ApiError> {
    let named = effort.map(named_effort).transpose()?;
    let budget_tokens = match thinking {
        Some(ThinkingConfig::Enabled { budget_tokens, .. }) => budget_tokens,
        Some(ThinkingConfig::Adaptive { .. } | ThinkingConfig::BetweenTools {}) => {
            return Ok(Some(named.unwrap_or(ReasoningEffort::Medium)))
        }
        Some(ThinkingConfig::Disabled {}) | None => return Ok(named),
    };
    let budget = *budget_tokens;
    if budget < 1024 {
        return Err(invalid(
            "thinking.enabled.budget_tokens",
            "Input should be greater than or equal to 1024",
        ));
    }
    if max_tokens.is_some_and(|max| budget >= max) {
        return Err(invalid(
            "max_tokens",
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ));
    }
    Ok(Some(match budget {
        ..=2048 => ReasoningEffort::Low,
        2049..=8192 => ReasoningEffort::Medium,
        8193..=24_576 => ReasoningEffort::High,
        _ => ReasoningEffort::Xhigh,
    }))
}

fn named_effort(effort: &str) -> Result<ReasoningEffort, ApiError> {
    Ok(match effort {
        "low" => ReasoningEffort::Low,
        "medium" => ReasoningEffort::Medium,
        "high" => ReasoningEffort::High,
        "xhigh" | "max" => ReasoningEffort::Xhigh,
        other => {
            return Err(invalid(
                "output_config.effort",
                format!("Input should be 'low', 'medium', 'high', 'xhigh' or 'max', not '{other}'"),
            ))
        }
    })
}

fn service_tier(tier: String) -> Result<String, ApiError> {
    match tier.as_str() {
        "auto" => Ok("auto".to_owned()),
        "standard_only" => Ok("default".to_owned()),
        other => Err(invalid(
            "service_tier",
            format!("Input should be 'auto' or 'standard_only', not '{other}'"),
        )),
    }
}

/// Fields of a custom tool about how Anthropic loads or calls it (tool
/// search, programmatic calling, streaming, examples): accepted; the tool
/// is offered to the model like any other.
const CUSTOM_TOOL_HINTS: [&str; 4] = [
    "defer_loading",
    "allowed_callers",
    "eager_input_streaming",
    "input_examples",
];

/// Custom tools become function tools; Anthropic's typed tools are
/// refused by name (none of them is served on this surface yet).
fn custom_tools(tools: Vec<(usize, ToolDefinition)>) -> Result<Vec<Tool>, ApiError> {
    tools
        .into_iter()
        .map(|(i, t)| {
            let path = format!("tools.{i}");
            if !t.is_custom() {
                return Err(typed_tool(&path, t.kind.as_deref().unwrap_or_default()));
            }
            let unknown = t
                .settings
                .keys()
                .find(|k| !CUSTOM_TOOL_HINTS.contains(&k.as_str()) && k.as_str() != "strict");
            if let Some(extra) = unknown {
                return Err(invalid(
                    &format!("{path}.{extra}"),
                    "Extra inputs are not permitted",
                ));
            }
            let name = required(t.name, &format!("{path}.name"))?;
            let schema = required(t.input_schema, &format!("{path}.input_schema"))?;
            if !schema.is_object() {
                return Err(invalid(
                    &format!("{path}.input_schema"),
                    "Input should be a valid dictionary",
                ));
            }
            Ok(Tool::Function(FunctionTool {
                name,
                description: t.description,
                parameters: Some(schema),
                strict: t.settings.get("strict").and_then(Value::as_bool),
            }))
        })
        .collect()
}

/// Anthropic's client-run typed tools (`bash_*`, `text_editor_*`,
/// `computer_*`, `memory_*`) have no schema the upstream could be given.
/// (Its server tools are `server_tools.rs`'.)
fn typed_tool(path: &str, kind: &str) -> ApiError {
    let why = format!(
        "the tool type `{kind}` is not supported on this server; declare the tool as a \
         custom tool with an `input_schema`"
    );
    invalid(&format!("{path}.type"), why).code("unsupported_tool_type")
}

/// The MCP connector's servers as `mcp` tools. A server the client names
/// with a URL is its own (Anthropic's connector has no approvals, so its
/// calls run without one); one without a URL is the operator's configured
/// server of that label, under the operator's approval default.
fn mcp_tools(servers: Vec<McpServer>) -> Result<Vec<Tool>, ApiError> {
    let mut tools = Vec::new();
    for (i, server) in servers.into_iter().enumerate() {
        let path = format!("mcp_servers.{i}");
        if server.kind != "url" {
            return Err(invalid(
                &format!("{path}.type"),
                format!("Input should be 'url', not '{}'", server.kind),
            ));
        }
        let config = server.tool_configuration.unwrap_or_default();
        if config.enabled == Some(false) {
            continue;
        }
        let own = server.url.is_some();
        tools.push(Tool::Mcp(McpTool {
            server_label: server.name,
            server_url: server.url,
            connector_id: None,
            server_description: None,
            headers: None,
            authorization: server.authorization_token,
            allowed_tools: config.allowed_tools.map(McpAllowedTools::Names),
            require_approval: own.then_some(McpRequireApproval::Mode(McpApprovalMode::Never)),
        }));
    }
    Ok(tools)
}

fn tool_choice(choice: AnthropicChoice) -> ToolChoice {
    match choice {
        AnthropicChoice::Auto { .. } => ToolChoice::Mode(ToolChoiceMode::Auto),
        AnthropicChoice::Any { .. } => ToolChoice::Mode(ToolChoiceMode::Required),
        AnthropicChoice::None {} => ToolChoice::Mode(ToolChoiceMode::None),
        AnthropicChoice::Tool { name, .. } => {
            ToolChoice::Object(ToolChoiceObject::Function(SpecificFunction { name }))
        }
    }
}

/// The body parsed, a wrong field named by its path (`messages.0.role`).
pub(crate) fn parse(bytes: &[u8]) -> Result<MessagesRequest, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::invalid(format!(
                "There was an issue with your request body: {inner}"
            ));
        }
        let path = anthropic_path(&path);
        let why = inner.to_string();
        if path.is_empty() || path == "." {
            ApiError::invalid(why)
        } else {
            invalid(&path, why)
        }
    })
}

/// `messages[0].content` as Anthropic writes it: `messages.0.content`.
fn anthropic_path(path: &str) -> String {
    path.replace('[', ".").replace(']', "")
}

//! `ModelRequest` -> Responses API request body.

use serde::Serialize;
use serde_json::Value;
use windlass_engine::{ModelRequest, ModelTool, ModelToolChoice, ProviderError};
use windlass_protocol::{Item, ReasoningEffort, TextFormat};

/// Asks for reasoning in its encrypted form: with `store: false` it is the
/// only way the upstream can see its own reasoning again in the next turn.
const INCLUDE_ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    input: Vec<Item>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextOptions<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    /// Windlass stores; the upstream must not (and need not) remember.
    store: bool,
    stream: bool,
    include: [&'static str; 1],
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Debug, Serialize)]
struct TextOptions<'a> {
    format: &'a TextFormat,
}

#[derive(Debug, Serialize)]
struct ReasoningOptions {
    effort: ReasoningEffort,
}

/// The JSON body of one stateless turn.
pub fn encode_responses(req: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let body = Body {
        model: &req.model,
        input: req.transcript.iter().filter_map(upstream_item).collect(),
        instructions: req.instructions.as_deref(),
        tools: req.tools.iter().map(tool).collect(),
        tool_choice: (!req.tools.is_empty()).then(|| tool_choice(&req.tool_choice)),
        parallel_tool_calls: req.parallel_tool_calls.filter(|_| !req.tools.is_empty()),
        temperature: req.temperature,
        top_p: req.top_p,
        presence_penalty: req.presence_penalty,
        frequency_penalty: req.frequency_penalty,
        max_output_tokens: req.max_output_tokens,
        top_logprobs: req.top_logprobs.filter(|n| *n > 0),
        text: req
            .text_format
            .as_ref()
            .map(|format| TextOptions { format }),
        reasoning: req
            .reasoning_effort
            .map(|effort| ReasoningOptions { effort }),
        user: req.user.as_deref(),
        store: false,
        stream: req.stream,
        include: [INCLUDE_ENCRYPTED_REASONING],
    };
    serde_json::to_vec(&body).map_err(|e| ProviderError::Unsupported {
        message: format!("the request cannot be serialized: {e}"),
        param: None,
    })
}

/// An item as this upstream may see it. Windlass's item ids mean nothing
/// to a stateless upstream (and a stored-item lookup by id would fail), and
/// the fields Windlass adds to the OpenAI shape are dropped. Reasoning goes
/// up only in its encrypted form: plain reasoning text cannot be verified.
fn upstream_item(item: &Item) -> Option<Item> {
    let mut item = item.clone();
    match &mut item {
        Item::Message(m) => {
            m.id = None;
            m.status = None;
            m.phase = None;
        }
        Item::FunctionCall(c) => c.id = None,
        Item::FunctionCallOutput(o) => {
            o.id = None;
            o.status = None;
            o.is_error = None;
        }
        Item::Reasoning(r) => {
            r.encrypted_content.as_ref()?;
            r.id = None;
            r.status = None;
            r.content = None;
        }
        _ => {}
    }
    Some(item)
}

fn tool(t: &ModelTool) -> Tool<'_> {
    Tool {
        kind: "function",
        name: &t.name,
        description: t.description.as_deref(),
        parameters: &t.parameters,
        strict: t.strict,
    }
}

fn tool_choice(choice: &ModelToolChoice) -> Value {
    match choice {
        ModelToolChoice::Auto => "auto".into(),
        ModelToolChoice::None => "none".into(),
        ModelToolChoice::Required => "required".into(),
        ModelToolChoice::Function(name) => {
            serde_json::json!({"type": "function", "name": name})
        }
    }
}

//! `ModelRequest` -> Responses API request body.

use serde::Serialize;
use serde_json::Value;
use windlass_engine::{ModelRequest, ModelTool, ModelToolChoice, ProviderError, INCLUDE_LOGPROBS};
use windlass_protocol::{
    ContentPart, Item, MessageContent, ReasoningEffort, ReasoningSummary, TextFormat, Verbosity,
};

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
    service_tier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    safety_identifier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    /// Windlass stores; the upstream must not (and need not) remember.
    store: bool,
    stream: bool,
    include: Vec<&'static str>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'a TextFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verbosity: Option<Verbosity>,
}

#[derive(Debug, Serialize)]
struct ReasoningOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<ReasoningEffort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<ReasoningSummary>,
}

/// The fields `POST /responses/input_tokens` takes (it refuses others).
const COUNT_FIELDS: [&str; 8] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "text",
];

/// The JSON body of one stateless turn.
pub fn encode_responses(req: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    refuse_unsupported(req)?;
    serde_json::to_vec(&body(req)).map_err(not_serializable)
}

/// OpenAI's Responses API has no stop sequences and no `top_k`: refused
/// by name, because the answer would not stop where the client asked (the
/// gateway does not cut a streamed text itself).
fn refuse_unsupported(req: &ModelRequest) -> Result<(), ProviderError> {
    if !req.stop.is_empty() {
        return Err(crate::encode::unsupported(
            "a Responses upstream (`kind = \"responses\"`) has no stop sequences \
             (`stop`, the Messages API's `stop_sequences`); serve this model from a chat-completions or Anthropic upstream to use them",
            "stop",
        ));
    }
    if req.top_k.is_some() {
        return Err(crate::encode::unsupported(
            "a Responses upstream (`kind = \"responses\"`) has no `top_k`; serve this model \
             from a chat-completions or Anthropic upstream to use it",
            "top_k",
        ));
    }
    Ok(())
}

/// The body of `POST /responses/input_tokens` counting what
/// [`encode_responses`] would send.
pub fn encode_count(req: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
    let mut value = serde_json::to_value(body(req)).map_err(not_serializable)?;
    if let Value::Object(fields) = &mut value {
        fields.retain(|k, _| COUNT_FIELDS.contains(&k.as_str()));
    }
    serde_json::to_vec(&value).map_err(not_serializable)
}

fn not_serializable(e: serde_json::Error) -> ProviderError {
    ProviderError::Unsupported {
        message: format!("the request cannot be serialized: {e}"),
        param: None,
    }
}

fn body(req: &ModelRequest) -> Body<'_> {
    Body {
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
        top_logprobs: req.top_logprobs.filter(|n| *n > 0 && req.logprobs),
        text: (req.text_format.is_some() || req.verbosity.is_some()).then_some(TextOptions {
            format: req.text_format.as_ref(),
            verbosity: req.verbosity,
        }),
        reasoning: (req.reasoning_effort.is_some() || req.reasoning_summary.is_some()).then_some(
            ReasoningOptions {
                effort: req.reasoning_effort,
                summary: req.reasoning_summary,
            },
        ),
        service_tier: req.service_tier.as_deref(),
        prompt_cache_key: req.prompt_cache_key.as_deref(),
        safety_identifier: req.safety_identifier.as_deref(),
        user: req.user.as_deref(),
        store: false,
        stream: req.stream,
        include: include(req),
    }
}

/// Encrypted reasoning always; the output text's log probabilities when
/// the client asked for them.
fn include(req: &ModelRequest) -> Vec<&'static str> {
    let mut include = vec![INCLUDE_ENCRYPTED_REASONING];
    if req.logprobs {
        include.push(INCLUDE_LOGPROBS);
    }
    include
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
            // Log probabilities describe an answer; they are no input.
            if let MessageContent::Parts(parts) = &mut m.content {
                for part in parts {
                    if let ContentPart::OutputText(t) = part {
                        t.logprobs = None;
                    }
                }
            }
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

//! `ModelRequest` -> chat completions request body.
//!
//! Pure: the result is a borrowing [`ChatRequest`] that serializes to the
//! JSON body, so the transcript is never copied except where the wire form
//! needs new text (joined parts).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use windlass_engine::{ModelRequest, ModelTool, ModelToolChoice, ProviderError};
use windlass_protocol::{ReasoningEffort, TextFormat, Verbosity};

use crate::config::MaxTokensField;
use crate::messages::{encode_messages, ChatMessage};

/// The chat completions request body. Serialize it to get the JSON.
#[derive(Debug, Serialize)]
pub struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ChatTool<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ChatToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<&'a [String]>,
    /// Not in OpenAI's chat completions: vLLM and llama.cpp take it.
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    logprobs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<ReasoningEffort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verbosity: Option<Verbosity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service_tier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    safety_identifier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct ChatTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Debug, Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ChatToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: NamedFunction<'a>,
    },
}

#[derive(Debug, Serialize)]
struct NamedFunction<'a> {
    name: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseFormat<'a> {
    JsonObject,
    JsonSchema { json_schema: JsonSchema<'a> },
}

#[derive(Debug, Serialize)]
struct JsonSchema<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

/// Maps one model turn to the chat completions body.
///
/// Fails with [`ProviderError::Unsupported`] for input the chat completions
/// API cannot carry (file ids, videos, items the engine should have resolved).
pub fn encode_request(
    req: &ModelRequest,
    max_tokens_field: MaxTokensField,
) -> Result<ChatRequest<'_>, ProviderError> {
    let has_tools = !req.tools.is_empty();
    let max_tokens = req.max_output_tokens;
    let (max_tokens, max_completion_tokens) = match max_tokens_field {
        MaxTokensField::MaxTokens => (max_tokens, None),
        MaxTokensField::MaxCompletionTokens => (None, max_tokens),
    };
    Ok(ChatRequest {
        model: &req.model,
        messages: encode_messages(req.instructions.as_deref(), &req.transcript)?,
        tools: has_tools.then(|| req.tools.iter().map(encode_tool).collect()),
        tool_choice: has_tools.then(|| encode_tool_choice(&req.tool_choice)),
        parallel_tool_calls: req.parallel_tool_calls.filter(|_| has_tools),
        temperature: req.temperature,
        top_p: req.top_p,
        stop: (!req.stop.is_empty()).then_some(req.stop.as_slice()),
        top_k: req.top_k,
        presence_penalty: req.presence_penalty,
        frequency_penalty: req.frequency_penalty,
        max_tokens,
        max_completion_tokens,
        // OpenAI shows log probabilities only when `include` asks for them,
        // so only then are they computed.
        logprobs: req.logprobs.then_some(true),
        top_logprobs: req.top_logprobs.filter(|_| req.logprobs),
        response_format: encode_format(req.text_format.as_ref())?,
        reasoning_effort: req.reasoning_effort,
        verbosity: req.verbosity,
        service_tier: req.service_tier.as_deref(),
        prompt_cache_key: req.prompt_cache_key.as_deref(),
        safety_identifier: req.safety_identifier.as_deref(),
        user: req.user.as_deref(),
        stream: req.stream,
        stream_options: req.stream.then_some(StreamOptions {
            include_usage: true,
        }),
    })
}

/// Serializes the body once; retries resend the same bytes.
pub fn encode_body(
    req: &ModelRequest,
    max_tokens_field: MaxTokensField,
) -> Result<Vec<u8>, ProviderError> {
    let body = encode_request(req, max_tokens_field)?;
    serde_json::to_vec(&body).map_err(|e| ProviderError::Unsupported {
        message: format!("the request cannot be serialized: {e}"),
        param: None,
    })
}

fn encode_tool(tool: &ModelTool) -> ChatTool<'_> {
    let parameters = if tool.parameters.is_null() {
        // Servers validate `parameters` as a JSON schema object.
        Cow::Owned(serde_json::json!({"type": "object", "properties": {}}))
    } else {
        Cow::Borrowed(&tool.parameters)
    };
    ChatTool {
        kind: "function",
        function: ToolFunction {
            name: &tool.name,
            description: tool.description.as_deref(),
            parameters,
            strict: tool.strict,
        },
    }
}

fn encode_tool_choice(choice: &ModelToolChoice) -> ChatToolChoice<'_> {
    match choice {
        ModelToolChoice::Auto => ChatToolChoice::Mode("auto"),
        ModelToolChoice::None => ChatToolChoice::Mode("none"),
        ModelToolChoice::Required => ChatToolChoice::Mode("required"),
        ModelToolChoice::Function(name) => ChatToolChoice::Function {
            kind: "function",
            function: NamedFunction { name },
        },
    }
}

fn encode_format(format: Option<&TextFormat>) -> Result<Option<ResponseFormat<'_>>, ProviderError> {
    match format {
        None | Some(TextFormat::Text(_)) => Ok(None),
        Some(TextFormat::JsonObject(_)) => Ok(Some(ResponseFormat::JsonObject)),
        Some(TextFormat::JsonSchema(s)) => Ok(Some(ResponseFormat::JsonSchema {
            json_schema: JsonSchema {
                name: &s.name,
                description: s.description.as_deref(),
                schema: &s.schema,
                strict: s.strict,
            },
        })),
        Some(other) => Err(unsupported(
            format!(
                "text.format `{}` is not supported by this upstream",
                other.type_name()
            ),
            "text.format",
        )),
    }
}

pub(crate) fn unsupported(message: impl Into<String>, param: &str) -> ProviderError {
    ProviderError::Unsupported {
        message: message.into(),
        param: Some(param.into()),
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;

//! The response resource a prepared request starts from: the request's
//! settings echoed, no output yet, secrets left out.

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ConversationRef, CreateResponseRequest, ResponseResource, ResponseStatus, TextField, Tool,
    Truncation,
};

use crate::clock::now_secs;
use crate::run_context::Identity;

/// The response resource echoing the request, before any output.
pub(super) fn skeleton(
    req: &CreateResponseRequest,
    model: String,
    identity: Option<Identity>,
) -> ResponseResource {
    // A response started again after a restart keeps its id and time.
    let (id, created_at) = match identity {
        Some(Identity { id, created_at }) => (id, created_at),
        None => (new_id(prefix::RESPONSE), now_secs()),
    };
    ResponseResource {
        id,
        object: "response".to_owned(),
        created_at,
        completed_at: None,
        // A background response waits for a worker first.
        status: match req.background {
            Some(true) => ResponseStatus::Queued,
            _ => ResponseStatus::InProgress,
        },
        incomplete_details: None,
        model,
        previous_response_id: req.previous_response_id.clone(),
        instructions: req.instructions.clone(),
        output: Vec::new(),
        error: None,
        tools: req.tools.iter().flatten().map(redact_tool).collect(),
        tool_choice: req.tool_choice.clone().unwrap_or_default(),
        truncation: req.truncation.unwrap_or(Truncation::Disabled),
        parallel_tool_calls: req.parallel_tool_calls.unwrap_or(true),
        text: TextField {
            format: req
                .text
                .as_ref()
                .and_then(|t| t.format.clone())
                .unwrap_or_else(|| TextField::default().format),
            verbosity: req.text.as_ref().and_then(|t| t.verbosity),
        },
        top_p: req.top_p.unwrap_or(1.0),
        presence_penalty: req.presence_penalty.unwrap_or(0.0),
        frequency_penalty: req.frequency_penalty.unwrap_or(0.0),
        top_logprobs: req.top_logprobs.unwrap_or(0),
        temperature: req.temperature.unwrap_or(1.0),
        reasoning: req.reasoning.clone(),
        usage: None,
        max_output_tokens: req.max_output_tokens,
        max_tool_calls: req.max_tool_calls,
        store: req.store.unwrap_or(true),
        background: req.background.unwrap_or(false),
        service_tier: "default".to_owned(),
        metadata: req.metadata.clone().unwrap_or_default(),
        safety_identifier: req.safety_identifier.clone(),
        prompt_cache_key: req.prompt_cache_key.clone(),
        allowed_tools: req.allowed_tools.clone(),
        user: req.user.clone(),
        conversation: req.conversation.as_ref().map(|c| ConversationRef {
            id: c.id().to_owned(),
        }),
        prompt: None,
        stop_sequence: None,
    }
}

/// Secrets a request gives for an MCP server are never echoed or stored.
fn redact_tool(tool: &Tool) -> Tool {
    match tool {
        Tool::Mcp(m) => {
            let mut m = m.clone();
            m.headers = None;
            m.authorization = None;
            Tool::Mcp(m)
        }
        other => other.clone(),
    }
}

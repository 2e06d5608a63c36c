//! The boundary between the canonical transcript and what the upstream sees:
//! only messages, function calls, their outputs and reasoning go up.

use windlass_protocol::{FunctionCall, FunctionCallOutput, Item, ItemStatus, ToolOutput};

use crate::ports::provider::{ModelRequest, ModelToolChoice};
use crate::prepare::PreparedRun;

/// The model-visible name of an MCP server's tool.
pub fn mcp_tool_name(server_label: &str, tool: &str) -> String {
    format!("{server_label}__{tool}")
}

/// Adds `item` to `out` in the form the upstream understands (seed 003:
/// `mcp_call` becomes a function call and its output; MCP listing and
/// approval items are client-facing only).
pub(crate) fn push_upstream(out: &mut Vec<Item>, item: &Item) {
    match item {
        Item::Message(_)
        | Item::FunctionCall(_)
        | Item::FunctionCallOutput(_)
        | Item::Reasoning(_) => out.push(item.clone()),
        Item::McpCall(c) => {
            out.push(Item::FunctionCall(FunctionCall {
                id: None,
                call_id: c.id.clone(),
                name: mcp_tool_name(&c.server_label, &c.name),
                arguments: c.arguments.clone(),
                status: Some(ItemStatus::Completed),
            }));
            let (text, is_error) = match (&c.output, &c.error) {
                (_, Some(err)) => (format!("Error: {err}"), Some(true)),
                (Some(o), None) => (o.clone(), None),
                (None, None) => (
                    "Error: the tool call did not complete".to_owned(),
                    Some(true),
                ),
            };
            out.push(Item::FunctionCallOutput(FunctionCallOutput {
                id: None,
                call_id: c.id.clone(),
                output: ToolOutput::Text(text),
                status: Some(ItemStatus::Completed),
                is_error,
            }));
        }
        _ => {}
    }
}

/// The upstream request for the next model turn.
pub(crate) fn model_request(
    run: &PreparedRun,
    output: &[Item],
    turn: u32,
    stream: bool,
) -> ModelRequest {
    let mut transcript = Vec::with_capacity(run.history.len() + run.input.len() + output.len());
    for item in run.history.iter().chain(&run.input).chain(output) {
        push_upstream(&mut transcript, item);
    }
    let req = &run.request;
    let tools = run.tools.model_tools();
    // A forced or required choice applies to the first turn only, so the loop can end.
    let tool_choice = if turn == 0 || run.first_choice == ModelToolChoice::None {
        run.first_choice.clone()
    } else {
        ModelToolChoice::Auto
    };
    ModelRequest {
        model: run.response.model.clone(),
        instructions: req.instructions.clone(),
        transcript,
        tools,
        tool_choice,
        parallel_tool_calls: req.parallel_tool_calls,
        temperature: req.temperature,
        top_p: req.top_p,
        presence_penalty: req.presence_penalty,
        frequency_penalty: req.frequency_penalty,
        max_output_tokens: req.max_output_tokens,
        top_logprobs: req.top_logprobs,
        text_format: req.text.as_ref().and_then(|t| t.format.clone()),
        reasoning_effort: req.reasoning.as_ref().and_then(|r| r.effort),
        user: req.safety_identifier.clone().or_else(|| req.user.clone()),
        stream,
    }
}

//! Server-sent stream events: the 24 of the OpenResponses contract plus
//! Windlass's and OpenAI's extensions (`response.cancelled`, `response.requires_action`, MCP).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{Annotation, ContentPart, LogProb};
use crate::error::ErrorPayload;
use crate::items::Item;
use crate::response::ResponseResource;

/// One stream event: its data and its position in the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    #[serde(flatten)]
    /// The event itself; its `type` and fields sit at the top level of the JSON.
    pub data: EventData,
    /// The event's position in its response's stream: 0, 1, 2, ... across
    /// every turn (`starting_after` resumes after it).
    pub sequence_number: u64,
}

impl StreamEvent {
    /// The SSE `event:` name, equal to the JSON `type`.
    pub fn event_type(&self) -> &str {
        self.data.event_type()
    }
}

/// A stream event's `type` and fields: one variant per event type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
// One variant per wire event `type` (the `rename` beside it): the
// OpenResponses contract's events (openapi.json) plus OpenAI's (MCP, hosted
// and custom tools) and the `cancelled`/`requires_action` extensions. Their
// fields are the events' fields, named as the wire names them.
#[allow(missing_docs)]
pub enum EventData {
    #[serde(rename = "response.created")]
    Created { response: Box<ResponseResource> },
    #[serde(rename = "response.queued")]
    Queued { response: Box<ResponseResource> },
    #[serde(rename = "response.in_progress")]
    InProgress { response: Box<ResponseResource> },
    #[serde(rename = "response.completed")]
    Completed { response: Box<ResponseResource> },
    #[serde(rename = "response.failed")]
    Failed { response: Box<ResponseResource> },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: Box<ResponseResource> },
    #[serde(rename = "response.cancelled")]
    Cancelled { response: Box<ResponseResource> },
    #[serde(rename = "response.requires_action")]
    RequiresAction { response: Box<ResponseResource> },

    #[serde(rename = "response.output_item.added")]
    OutputItemAdded { output_index: usize, item: Item },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone { output_index: usize, item: Item },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        item_id: String,
        output_index: usize,
        content_index: usize,
        part: ContentPart,
    },
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        part: ContentPart,
    },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        item_id: String,
        output_index: usize,
        content_index: usize,
        delta: String,
        #[serde(default)]
        logprobs: Vec<LogProb>,
    },
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        text: String,
        #[serde(default)]
        logprobs: Vec<LogProb>,
    },
    #[serde(rename = "response.output_text.annotation.added")]
    OutputTextAnnotationAdded {
        item_id: String,
        output_index: usize,
        content_index: usize,
        annotation_index: usize,
        annotation: Annotation,
    },
    #[serde(rename = "response.refusal.delta")]
    RefusalDelta {
        item_id: String,
        output_index: usize,
        content_index: usize,
        delta: String,
    },
    #[serde(rename = "response.refusal.done")]
    RefusalDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        refusal: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        item_id: String,
        output_index: usize,
        arguments: String,
    },
    #[serde(rename = "response.reasoning.delta")]
    ReasoningDelta {
        item_id: String,
        output_index: usize,
        content_index: usize,
        delta: String,
    },
    #[serde(rename = "response.reasoning.done")]
    ReasoningDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        text: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    ReasoningSummaryPartAdded {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        part: ContentPart,
    },
    #[serde(rename = "response.reasoning_summary_part.done")]
    ReasoningSummaryPartDone {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        part: ContentPart,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_text.done")]
    ReasoningSummaryTextDone {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        text: String,
    },
    #[serde(rename = "error")]
    Error { error: ErrorPayload },

    #[serde(rename = "response.mcp_list_tools.in_progress")]
    McpListToolsInProgress {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_list_tools.completed")]
    McpListToolsCompleted {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_list_tools.failed")]
    McpListToolsFailed {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_call.in_progress")]
    McpCallInProgress {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_call.completed")]
    McpCallCompleted {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_call.failed")]
    McpCallFailed {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.mcp_call_arguments.delta")]
    McpCallArgumentsDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.mcp_call_arguments.done")]
    McpCallArgumentsDone {
        item_id: String,
        output_index: usize,
        arguments: String,
    },
    #[serde(rename = "response.custom_tool_call_input.delta")]
    CustomToolCallInputDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.custom_tool_call_input.done")]
    CustomToolCallInputDone {
        item_id: String,
        output_index: usize,
        input: String,
    },
    #[serde(rename = "response.file_search_call.in_progress")]
    FileSearchCallInProgress {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.file_search_call.searching")]
    FileSearchCallSearching {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.file_search_call.completed")]
    FileSearchCallCompleted {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.web_search_call.in_progress")]
    WebSearchCallInProgress {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.web_search_call.searching")]
    WebSearchCallSearching {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.web_search_call.completed")]
    WebSearchCallCompleted {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.code_interpreter_call.in_progress")]
    CodeInterpreterCallInProgress {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.code_interpreter_call.interpreting")]
    CodeInterpreterCallInterpreting {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.code_interpreter_call.completed")]
    CodeInterpreterCallCompleted {
        item_id: String,
        output_index: usize,
    },
    #[serde(rename = "response.code_interpreter_call_code.delta")]
    CodeInterpreterCallCodeDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.code_interpreter_call_code.done")]
    CodeInterpreterCallCodeDone {
        item_id: String,
        output_index: usize,
        code: String,
    },

    /// An event type this version does not know; kept verbatim (clients only).
    #[serde(untagged)]
    Unknown(Value),
}

impl EventData {
    /// The event's wire `type` (also its SSE `event:` name).
    pub fn event_type(&self) -> &str {
        use EventData::*;
        match self {
            Created { .. } => "response.created",
            Queued { .. } => "response.queued",
            InProgress { .. } => "response.in_progress",
            Completed { .. } => "response.completed",
            Failed { .. } => "response.failed",
            Incomplete { .. } => "response.incomplete",
            Cancelled { .. } => "response.cancelled",
            RequiresAction { .. } => "response.requires_action",
            OutputItemAdded { .. } => "response.output_item.added",
            OutputItemDone { .. } => "response.output_item.done",
            ContentPartAdded { .. } => "response.content_part.added",
            ContentPartDone { .. } => "response.content_part.done",
            OutputTextDelta { .. } => "response.output_text.delta",
            OutputTextDone { .. } => "response.output_text.done",
            OutputTextAnnotationAdded { .. } => "response.output_text.annotation.added",
            RefusalDelta { .. } => "response.refusal.delta",
            RefusalDone { .. } => "response.refusal.done",
            FunctionCallArgumentsDelta { .. } => "response.function_call_arguments.delta",
            FunctionCallArgumentsDone { .. } => "response.function_call_arguments.done",
            ReasoningDelta { .. } => "response.reasoning.delta",
            ReasoningDone { .. } => "response.reasoning.done",
            ReasoningSummaryPartAdded { .. } => "response.reasoning_summary_part.added",
            ReasoningSummaryPartDone { .. } => "response.reasoning_summary_part.done",
            ReasoningSummaryTextDelta { .. } => "response.reasoning_summary_text.delta",
            ReasoningSummaryTextDone { .. } => "response.reasoning_summary_text.done",
            Error { .. } => "error",
            McpListToolsInProgress { .. } => "response.mcp_list_tools.in_progress",
            McpListToolsCompleted { .. } => "response.mcp_list_tools.completed",
            McpListToolsFailed { .. } => "response.mcp_list_tools.failed",
            McpCallInProgress { .. } => "response.mcp_call.in_progress",
            McpCallCompleted { .. } => "response.mcp_call.completed",
            McpCallFailed { .. } => "response.mcp_call.failed",
            McpCallArgumentsDelta { .. } => "response.mcp_call_arguments.delta",
            McpCallArgumentsDone { .. } => "response.mcp_call_arguments.done",
            CustomToolCallInputDelta { .. } => "response.custom_tool_call_input.delta",
            CustomToolCallInputDone { .. } => "response.custom_tool_call_input.done",
            FileSearchCallInProgress { .. } => "response.file_search_call.in_progress",
            FileSearchCallSearching { .. } => "response.file_search_call.searching",
            FileSearchCallCompleted { .. } => "response.file_search_call.completed",
            WebSearchCallInProgress { .. } => "response.web_search_call.in_progress",
            WebSearchCallSearching { .. } => "response.web_search_call.searching",
            WebSearchCallCompleted { .. } => "response.web_search_call.completed",
            CodeInterpreterCallInProgress { .. } => "response.code_interpreter_call.in_progress",
            CodeInterpreterCallInterpreting { .. } => "response.code_interpreter_call.interpreting",
            CodeInterpreterCallCompleted { .. } => "response.code_interpreter_call.completed",
            CodeInterpreterCallCodeDelta { .. } => "response.code_interpreter_call_code.delta",
            CodeInterpreterCallCodeDone { .. } => "response.code_interpreter_call_code.done",
            Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// True for the events that end a stream.
    pub fn is_terminal(&self) -> bool {
        use EventData::*;
        matches!(
            self,
            Completed { .. }
                | Failed { .. }
                | Incomplete { .. }
                | Cancelled { .. }
                | RequiresAction { .. }
        )
    }
}

//! The loop's tracing spans, named and filled after the OpenTelemetry GenAI
//! conventions so a trace exporter shows them as such: a `response` span
//! around a run, `chat {model}` per model turn, `execute_tool {tool}` per
//! call the server runs (`otel.name` is the exported span's name).
//!
//! All at debug: the info log's one line per response is the completion
//! line, written outside these spans, so formatting their fields for the
//! log is wasted; the trace exporter still takes them.

use tracing::Span;
use windlass_protocol::Usage;

use crate::ports::agent::tools::ToolCall;

/// Around a whole run (`invoke_agent`); usage is recorded at the end.
pub(crate) fn response(id: &str, model: &str) -> Span {
    tracing::debug_span!(
        "response",
        id = %id,
        model = %model,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
    )
}

/// Around one model call (`chat {model}`); usage is recorded once known.
pub(crate) fn model_turn(model: &str, turn: u32) -> Span {
    tracing::debug_span!(
        "model_turn",
        otel.name = %format_args!("chat {model}"),
        turn,
        gen_ai.operation.name = "chat",
        gen_ai.request.model = %model,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
    )
}

/// Around one call the server runs (`execute_tool {tool}`), in `turn`.
pub(crate) fn tool_call(call: &ToolCall, turn: u32) -> Span {
    tracing::debug_span!(
        "tool_call",
        otel.name = %format_args!("execute_tool {}", call.name),
        tool = %call.name,
        call_id = %call.call_id,
        turn,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.name,
        gen_ai.tool.call.id = %call.call_id,
    )
}

/// Token counts on a span that declared the GenAI usage fields.
pub(crate) fn record_usage(span: &Span, usage: Option<&Usage>) {
    // As i64: exporters show an u64 field as text (it may not fit).
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    if let Some(u) = usage {
        span.record("gen_ai.usage.input_tokens", int(u.input_tokens));
        span.record("gen_ai.usage.output_tokens", int(u.output_tokens));
    }
}

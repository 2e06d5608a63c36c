//! Messages API answers -> [`ModelEvent`]s.
//!
//! A non-streamed message is decoded as a stream whose content blocks all
//! arrived whole, so both paths share [`AnthropicDecoder`].

use std::collections::VecDeque;

use windlass_engine::{FinishReason, ModelEvent, ProviderError};

use super::wire::{BlockWire, Delta, Event, MessageWire, UsageWire};
use crate::codec::EventDecoder;
use crate::ending::{unreadable, usage, Ending};
use crate::http_error::error_from_value;
use crate::wire::Str;
use windlass_protocol::anthropic::REDACTED_THINKING_PREFIX as REDACTED_PREFIX;

/// What an open content block is.
#[derive(Debug)]
enum Open {
    Text,
    Thinking { signature: String },
    Tool { call: u32, has_arguments: bool },
    Other,
}

/// State of one turn.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    end: Ending,
    /// Open blocks by the upstream's block index.
    blocks: Vec<(u32, Open)>,
    calls: u32,
    /// Input side from `message_start`, output count from `message_delta`
    /// (which carries the running total).
    usage: UsageWire,
}

impl EventDecoder for AnthropicDecoder {
    fn data(&mut self, data: &str, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        if self.end.done || data.is_empty() {
            return Ok(());
        }
        let event: Event<'_> = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => return self.end.fail(unreadable("stream event", e)),
        };
        self.event(event, out)
    }

    fn cut(
        &mut self,
        error: ProviderError,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        self.end.cut(error, out)
    }

    fn is_done(&self) -> bool {
        self.end.done
    }
}

impl AnthropicDecoder {
    fn event(&mut self, e: Event<'_>, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        let index = e.index.unwrap_or(0);
        match e.kind.as_ref().map_or("", Str::as_str) {
            "message_start" => {
                if let Some(u) = e.message.and_then(|m| m.usage) {
                    self.add_usage(u);
                }
            }
            "content_block_start" => {
                let block = e.content_block.map(|b| *b).unwrap_or_default();
                self.block_start(index, block, false, out);
            }
            "content_block_delta" => {
                if let Some(delta) = e.delta {
                    self.block_delta(index, delta, out);
                }
            }
            "content_block_stop" => self.block_stop(index, out),
            "message_delta" => {
                if let Some(d) = e.delta {
                    if let Some(reason) = d.stop_reason {
                        self.end.finish = Some(map_stop(&reason, d.stop_sequence));
                    }
                }
                if let Some(u) = e.usage {
                    self.add_usage(u);
                }
            }
            "message_stop" => self.finish(out),
            "error" => {
                let err = e.error.unwrap_or_default();
                let status = error_status(err.get("type").and_then(|t| t.as_str()));
                return self.end.fail(error_from_value(&err, status));
            }
            _ => {}
        }
        Ok(())
    }

    fn block_start(
        &mut self,
        index: u32,
        b: BlockWire,
        whole: bool,
        out: &mut VecDeque<ModelEvent>,
    ) {
        let open = match b.kind.as_str() {
            "text" => {
                push(out, b.text, ModelEvent::TextDelta);
                Open::Text
            }
            "thinking" => {
                push(out, b.thinking, ModelEvent::ReasoningDelta);
                Open::Thinking {
                    signature: b.signature.unwrap_or_default(),
                }
            }
            "redacted_thinking" => {
                let data = b.data.unwrap_or_default();
                out.push_back(ModelEvent::ReasoningEncrypted(format!(
                    "{REDACTED_PREFIX}{data}"
                )));
                Open::Other
            }
            "tool_use" => {
                let call = self.calls;
                self.calls += 1;
                self.end.has_calls = true;
                // Streamed, `input` starts as `{}` and arrives as JSON deltas.
                let arguments = match (&b.input, whole) {
                    (Some(input), true) => input.to_string(),
                    _ => String::new(),
                };
                let has_arguments = !arguments.is_empty();
                out.push_back(ModelEvent::ToolCallDelta {
                    index: call,
                    id: b.id,
                    name: b.name,
                    arguments,
                });
                Open::Tool {
                    call,
                    has_arguments,
                }
            }
            _ => Open::Other,
        };
        self.blocks.push((index, open));
    }

    fn block_delta(&mut self, index: u32, d: Delta<'_>, out: &mut VecDeque<ModelEvent>) {
        let Some((_, open)) = self.blocks.iter_mut().find(|b| b.0 == index) else {
            return;
        };
        let text = |s: Option<Str<'_>>| s.map(Str::into_string);
        match (d.kind.as_ref().map_or("", Str::as_str), open) {
            ("text_delta", _) => push(out, text(d.text), ModelEvent::TextDelta),
            ("thinking_delta", _) => push(out, text(d.thinking), ModelEvent::ReasoningDelta),
            ("signature_delta", Open::Thinking { signature }) => {
                signature.push_str(d.signature.as_deref().unwrap_or_default());
            }
            (
                "input_json_delta",
                Open::Tool {
                    call,
                    has_arguments,
                },
            ) => {
                let arguments = text(d.partial_json).unwrap_or_default();
                if !arguments.is_empty() {
                    *has_arguments = true;
                    out.push_back(ModelEvent::ToolCallDelta {
                        index: *call,
                        id: None,
                        name: None,
                        arguments,
                    });
                }
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, index: u32, out: &mut VecDeque<ModelEvent>) {
        let Some(pos) = self.blocks.iter().position(|b| b.0 == index) else {
            return;
        };
        match self.blocks.remove(pos).1 {
            Open::Thinking { signature } if !signature.is_empty() => {
                out.push_back(ModelEvent::ReasoningEncrypted(signature));
            }
            // A tool without parameters streams no JSON at all.
            Open::Tool {
                call,
                has_arguments: false,
            } => out.push_back(ModelEvent::ToolCallDelta {
                index: call,
                id: None,
                name: None,
                arguments: "{}".into(),
            }),
            _ => {}
        }
    }

    fn add_usage(&mut self, u: UsageWire) {
        let keep = |new: Option<u64>, old: Option<u64>| new.or(old);
        self.usage = UsageWire {
            input_tokens: keep(u.input_tokens, self.usage.input_tokens),
            output_tokens: keep(u.output_tokens, self.usage.output_tokens),
            cache_creation_input_tokens: keep(
                u.cache_creation_input_tokens,
                self.usage.cache_creation_input_tokens,
            ),
            cache_read_input_tokens: keep(
                u.cache_read_input_tokens,
                self.usage.cache_read_input_tokens,
            ),
        };
    }

    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) {
        let u = self.usage;
        // Anthropic's `input_tokens` leaves out cached tokens; OpenAI's
        // counts them, with the cache hits as a detail.
        let cached = u.cache_read_input_tokens.unwrap_or(0);
        let input =
            u.input_tokens.unwrap_or(0) + u.cache_creation_input_tokens.unwrap_or(0) + cached;
        self.end.usage = Some(usage(input, u.output_tokens.unwrap_or(0), cached, 0));
        self.end.flush(out);
    }
}

fn push(out: &mut VecDeque<ModelEvent>, text: Option<String>, event: fn(String) -> ModelEvent) {
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        out.push_back(event(t));
    }
}

fn map_stop(reason: &str, sequence: Option<String>) -> FinishReason {
    match (reason, sequence) {
        ("stop_sequence", Some(s)) => FinishReason::StopSequence(s),
        (reason, _) => map_reason(reason),
    }
}

fn map_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" | "pause_turn" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The HTTP status Anthropic uses for an error type (sent in-stream).
fn error_status(kind: Option<&str>) -> u16 {
    match kind {
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        Some("permission_error") => 403,
        Some("not_found_error") => 404,
        Some("request_too_large") => 413,
        Some("rate_limit_error") => 429,
        Some("overloaded_error") => 529,
        _ => 500,
    }
}

/// Decodes a complete `message` body into the events a stream of the same
/// answer would have produced.
pub fn decode_message(body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
    let mut value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| unreadable("message", e))?;
    if value.get("type").and_then(|t| t.as_str()) == Some("error") {
        let err = value
            .get_mut("error")
            .map(std::mem::take)
            .unwrap_or_default();
        let status = error_status(err.get("type").and_then(|t| t.as_str()));
        return Err(error_from_value(&err, status));
    }
    let message: MessageWire =
        serde_json::from_value(value).map_err(|e| unreadable("message", e))?;
    let mut decoder = AnthropicDecoder::default();
    let mut out = VecDeque::new();
    for (index, block) in (0u32..).zip(message.content) {
        decoder.block_start(index, block, true, &mut out);
        decoder.block_stop(index, &mut out);
    }
    if let Some(u) = message.usage {
        decoder.add_usage(u);
    }
    decoder.end.finish = Some(match message.stop_reason {
        Some(reason) => map_stop(&reason, message.stop_sequence),
        None => FinishReason::Stop,
    });
    decoder.finish(&mut out);
    Ok(out.into())
}

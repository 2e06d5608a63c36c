//! Responses API answers -> [`ModelEvent`]s.
//!
//! Streamed, deltas become events as they come; a finished output item
//! adds what its deltas did not carry (encrypted reasoning, arguments a
//! server sent only whole). A non-streamed body is decoded as a stream whose
//! items all arrived finished, so both paths share [`ResponsesDecoder`].

use std::collections::{HashSet, VecDeque};

use serde::Deserialize;
use serde_json::Value;
use windlass_engine::{FinishReason, ModelEvent, ProviderError};
use windlass_protocol::Usage;

use crate::codec::EventDecoder;
use crate::ending::{unreadable, usage, Ending};
use crate::http_error::error_from_value;
use crate::logprobs::{text_event, TokenWire};
use crate::wire::Str;

/// Status reported for an error the upstream sent inside a 200 response.
const IN_BODY_ERROR_STATUS: u16 = 500;

/// One streamed event; only the fields Windlass reads.
#[derive(Debug, Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    delta: Option<Str<'a>>,
    #[serde(default)]
    output_index: Option<u32>,
    #[serde(default)]
    summary_index: Option<u32>,
    /// An `output_text.delta`'s tokens, when log probabilities were asked for.
    #[serde(default)]
    logprobs: Option<Vec<TokenWire>>,
    #[serde(default)]
    item: Option<Box<OutputItem>>,
    #[serde(default)]
    response: Option<Box<ResponseBody>>,
    /// The `error` event's own fields.
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
struct ResponseBody {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Vec<OutputItem>,
    #[serde(default)]
    usage: Option<UsageWire>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct OutputItem {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    content: Option<Vec<Part>>,
    #[serde(default)]
    summary: Option<Vec<Part>>,
    #[serde(default)]
    encrypted_content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    logprobs: Option<Vec<TokenWire>>,
}

#[derive(Debug, Default, Deserialize)]
struct UsageWire {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<Details>,
    #[serde(default)]
    output_tokens_details: Option<Details>,
}

#[derive(Debug, Default, Deserialize)]
struct Details {
    #[serde(default)]
    cached_tokens: u64,
    #[serde(default)]
    reasoning_tokens: u64,
}

/// State of one turn.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    end: Ending,
    /// Function calls by output index, in order; the position is the
    /// engine's call index. The flag says whether arguments were seen.
    calls: Vec<(u32, bool)>,
    /// Output indexes whose text already came as deltas.
    streamed: HashSet<u32>,
}

impl EventDecoder for ResponsesDecoder {
    fn data(&mut self, data: &str, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        if self.end.done || data.is_empty() || data.trim() == "[DONE]" {
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

impl ResponsesDecoder {
    fn event(&mut self, e: Event<'_>, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        let index = e.output_index.unwrap_or(0);
        let delta = || e.delta.map(Str::into_string).unwrap_or_default();
        match e.kind.as_str() {
            "response.output_text.delta" => {
                self.streamed.insert(index);
                let text = delta();
                if !text.is_empty() {
                    out.push_back(text_event(text, e.logprobs));
                }
            }
            "response.refusal.delta" => self.text(index, delta(), ModelEvent::RefusalDelta, out),
            "response.reasoning_text.delta" | "response.reasoning.delta" => {
                self.text(index, delta(), ModelEvent::ReasoningDelta, out)
            }
            "response.reasoning_summary_text.delta" => {
                let summary_index = e.summary_index.unwrap_or(0);
                self.text(
                    index,
                    delta(),
                    |delta| ModelEvent::ReasoningSummaryDelta {
                        summary_index,
                        delta,
                    },
                    out,
                )
            }
            "response.output_item.added" => {
                if let Some(item) = e.item.filter(|i| i.kind == "function_call") {
                    self.call_started(index, *item, out);
                }
            }
            "response.function_call_arguments.delta" => {
                let arguments = delta();
                if let Some(i) = self.calls.iter().position(|c| c.0 == index) {
                    self.calls[i].1 |= !arguments.is_empty();
                    out.push_back(ModelEvent::ToolCallDelta {
                        index: i as u32,
                        id: None,
                        name: None,
                        arguments,
                    });
                }
            }
            "response.output_item.done" => {
                if let Some(item) = e.item {
                    self.item_done(index, *item, out);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                return self.finished(e.response.map(|r| *r).unwrap_or_default(), out);
            }
            "error" => {
                let err = serde_json::json!({"message": e.message, "code": e.code});
                return self.end.fail(error_from_value(&err, IN_BODY_ERROR_STATUS));
            }
            _ => {}
        }
        Ok(())
    }

    fn text(
        &mut self,
        index: u32,
        text: String,
        event: impl FnOnce(String) -> ModelEvent,
        out: &mut VecDeque<ModelEvent>,
    ) {
        self.streamed.insert(index);
        if !text.is_empty() {
            out.push_back(event(text));
        }
    }

    fn call_started(&mut self, index: u32, item: OutputItem, out: &mut VecDeque<ModelEvent>) {
        let arguments = item.arguments.unwrap_or_default();
        self.calls.push((index, !arguments.is_empty()));
        self.end.has_calls = true;
        out.push_back(ModelEvent::ToolCallDelta {
            index: (self.calls.len() - 1) as u32,
            id: item.call_id,
            name: item.name,
            arguments,
        });
    }

    /// A finished output item: whatever its deltas did not already carry.
    fn item_done(&mut self, index: u32, item: OutputItem, out: &mut VecDeque<ModelEvent>) {
        let whole = !self.streamed.contains(&index);
        match item.kind.as_str() {
            "message" if whole => {
                for part in item.content.into_iter().flatten() {
                    match (part.kind.as_str(), part.text, part.refusal) {
                        ("refusal", _, Some(r)) => push(out, r, ModelEvent::RefusalDelta),
                        (_, Some(t), _) if !t.is_empty() => {
                            out.push_back(text_event(t, part.logprobs))
                        }
                        _ => {}
                    }
                }
            }
            "reasoning" => {
                if whole {
                    let text: String = item
                        .content
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p.text)
                        .collect();
                    push(out, text, ModelEvent::ReasoningDelta);
                    for (summary_index, part) in (0u32..).zip(item.summary.into_iter().flatten()) {
                        if let Some(delta) = part.text.filter(|t| !t.is_empty()) {
                            out.push_back(ModelEvent::ReasoningSummaryDelta {
                                summary_index,
                                delta,
                            });
                        }
                    }
                }
                if let Some(sealed) = item.encrypted_content.filter(|s| !s.is_empty()) {
                    out.push_back(ModelEvent::ReasoningEncrypted(sealed));
                }
            }
            "function_call" => match self.calls.iter().position(|c| c.0 == index) {
                None => self.call_started(index, item, out),
                Some(i) if !self.calls[i].1 => {
                    self.calls[i].1 = true;
                    out.push_back(ModelEvent::ToolCallDelta {
                        index: i as u32,
                        id: None,
                        name: None,
                        arguments: item.arguments.unwrap_or_default(),
                    });
                }
                Some(_) => {}
            },
            _ => {}
        }
    }

    fn finished(
        &mut self,
        response: ResponseBody,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(err) = response.error.filter(|e| !e.is_null()) {
            return self.end.fail(error_from_value(&err, IN_BODY_ERROR_STATUS));
        }
        if response.status.as_deref() == Some("failed") {
            let err = ProviderError::Status {
                status: IN_BODY_ERROR_STATUS,
                message: "the upstream response failed".into(),
                code: None,
            };
            return self.end.fail(err);
        }
        self.end.usage = response.usage.map(map_usage);
        let reason = response.incomplete_details.and_then(|d| d.reason);
        self.end.finish = Some(match (response.status.as_deref(), reason.as_deref()) {
            (Some("incomplete"), Some("max_output_tokens")) => FinishReason::Length,
            (Some("incomplete"), Some("content_filter")) => FinishReason::ContentFilter,
            (Some("incomplete"), other) => {
                FinishReason::Other(other.unwrap_or("incomplete").to_owned())
            }
            _ => FinishReason::Stop,
        });
        self.end.flush(out);
        Ok(())
    }
}

fn push(out: &mut VecDeque<ModelEvent>, text: String, event: fn(String) -> ModelEvent) {
    if !text.is_empty() {
        out.push_back(event(text));
    }
}

fn map_usage(u: UsageWire) -> Usage {
    usage(
        u.input_tokens,
        u.output_tokens,
        u.input_tokens_details.map_or(0, |d| d.cached_tokens),
        u.output_tokens_details.map_or(0, |d| d.reasoning_tokens),
    )
}

/// Decodes a complete `response` object into the events a stream of the
/// same answer would have produced.
pub fn decode_response(body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
    let mut response: ResponseBody =
        serde_json::from_slice(body).map_err(|e| unreadable("response", e))?;
    let mut decoder = ResponsesDecoder::default();
    let mut out = VecDeque::new();
    for (index, item) in (0u32..).zip(std::mem::take(&mut response.output)) {
        decoder.item_done(index, item, &mut out);
    }
    decoder.finished(response, &mut out)?;
    Ok(out.into())
}

//! Chat completions responses -> [`ModelEvent`]s.
//!
//! [`StreamDecoder`] turns the `data` payloads of an SSE stream into events;
//! [`decode_completion`] does the same for a non-streamed body, so both paths
//! give the engine one event vocabulary.
//!
//! `Usage` and `Finished` are held back until the upstream is done (`[DONE]`
//! or the end of the body): servers send the usage chunk after the
//! `finish_reason` chunk, some repeat usage on every chunk, and `Finished`
//! must come once, after all content. The stream therefore always ends with
//! `Usage` (when reported) then `Finished`.

use std::collections::VecDeque;

use serde_json::Value;
use windlass_engine::{FinishReason, ModelEvent, ProviderError};
use windlass_protocol::{InputTokensDetails, OutputTokensDetails, Usage};

use crate::codec::EventDecoder;
use crate::ending::{normalize_finish, Ending};
use crate::http_error::error_from_value;
use crate::logprobs::{text_event, TokenWire};
use crate::wire::{Chunk, Completion, Delta, Str, ToolCallChunk, UsageWire};

/// Status reported for an error the upstream sent inside a 200 response.
const IN_BODY_ERROR_STATUS: u16 = 500;

/// State of one streamed turn.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    /// Finish reason, usage and whether the turn is over: the same end
    /// rules as the other kinds' decoders.
    end: Ending,
    /// Tool calls seen so far, by upstream index, with the id and name
    /// already announced (some servers repeat them on every fragment).
    calls: Vec<CallSeen>,
    /// Whether any chunk carried a choice: a stream of none is as empty as
    /// a completion without choices, and fails the same way.
    saw_choice: bool,
}

#[derive(Debug)]
struct CallSeen {
    index: u32,
    id: Option<String>,
    name: Option<String>,
}

impl StreamDecoder {
    pub fn new() -> Self {
        StreamDecoder::default()
    }

    /// Whether the turn is over (`[DONE]`, an error, or the final events
    /// were produced); later data is ignored.
    pub fn is_done(&self) -> bool {
        self.end.done
    }

    /// Decodes one SSE `data` payload, appending its events to `out`.
    pub fn data(
        &mut self,
        data: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        if self.end.done || data.is_empty() {
            return Ok(());
        }
        if data.len() < 16 && data.trim() == "[DONE]" {
            if !self.saw_choice {
                self.end.done = true;
                return Err(ProviderError::Protocol(
                    "chat completion stream has no choices".into(),
                ));
            }
            self.flush(out);
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_str(data).map_err(|e| {
            self.end.done = true;
            ProviderError::Protocol(format!("invalid stream chunk: {e}"))
        })?;
        if let Some(error) = chunk.error {
            self.end.done = true;
            return Err(error_from_value(&error, IN_BODY_ERROR_STATUS));
        }
        if chunk.choices.is_none() && chunk.message.is_some() {
            self.end.done = true;
            return Err(ProviderError::Status {
                status: IN_BODY_ERROR_STATUS,
                message: chunk.message.map(Str::into_string).unwrap_or_default(),
                code: None,
            });
        }
        if let Some(usage) = chunk.usage {
            self.end.usage = Some(map_usage(*usage));
        }
        if let Some(choice) = chunk.choices {
            self.saw_choice = true;
            if let Some(delta) = choice.delta {
                let tokens = choice.logprobs.and_then(|l| l.content);
                self.delta(delta, tokens, out);
            }
            if let Some(reason) = choice.finish_reason {
                let stop = choice.stop_reason.as_deref();
                self.end.finish = Some(finish_of(reason.as_str(), stop));
            }
        }
        Ok(())
    }

    /// The body ended. Complete when a `finish_reason` came, even without
    /// `[DONE]`; otherwise the turn was cut short.
    pub fn end_of_body(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        self.cut(
            ProviderError::Interrupted("the stream ended before a finish_reason or [DONE]".into()),
            out,
        )
    }

    /// Reading stopped with `error` (idle timeout, broken connection). After
    /// a `finish_reason` nothing but usage can be missing, so the turn is
    /// completed instead of failed.
    pub fn cut(
        &mut self,
        error: ProviderError,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        self.end.has_calls = !self.calls.is_empty();
        self.end.cut(error, out)
    }

    fn flush(&mut self, out: &mut VecDeque<ModelEvent>) {
        self.end.has_calls = !self.calls.is_empty();
        self.end.flush(out);
    }

    fn delta(
        &mut self,
        delta: Delta<'_>,
        tokens: Option<Vec<TokenWire>>,
        out: &mut VecDeque<ModelEvent>,
    ) {
        // Servers in transition send both names with the same text.
        let reasoning = delta.reasoning_content.or(delta.reasoning);
        push_text(out, reasoning, ModelEvent::ReasoningDelta);
        if let Some(text) = delta.content.filter(|t| !t.as_str().is_empty()) {
            out.push_back(text_event(text.into_string(), tokens));
        }
        push_text(out, delta.refusal, ModelEvent::RefusalDelta);
        for call in delta.tool_calls.into_iter().flatten() {
            self.tool_call(call, out);
        }
    }

    fn tool_call(&mut self, call: ToolCallChunk<'_>, out: &mut VecDeque<ModelEvent>) {
        let id = call.id.filter(|s| !s.as_str().is_empty());
        let (name, arguments) = match call.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let index = call
            .index
            .unwrap_or_else(|| self.implicit_index(id.as_ref()));
        let slot = match self.calls.iter().position(|c| c.index == index) {
            Some(i) => i,
            None => {
                self.calls.push(CallSeen {
                    index,
                    id: None,
                    name: None,
                });
                self.calls.len() - 1
            }
        };
        let seen = &mut self.calls[slot];
        let id = announce(&mut seen.id, id);
        let name = announce(&mut seen.name, name);
        let arguments = arguments.map(Str::into_string).unwrap_or_default();
        if id.is_none() && name.is_none() && arguments.is_empty() {
            return;
        }
        out.push_back(ModelEvent::ToolCallDelta {
            index,
            id,
            name,
            arguments,
        });
    }

    /// For servers that omit `index`: a new id starts a new call, anything
    /// else continues the latest one.
    fn implicit_index(&self, id: Option<&Str<'_>>) -> u32 {
        let Some(last) = self.calls.last() else {
            return 0;
        };
        match id {
            Some(id) if last.id.as_deref() != Some(id.as_str()) => {
                self.calls.iter().map(|c| c.index).max().unwrap_or(0) + 1
            }
            _ => last.index,
        }
    }
}

impl EventDecoder for StreamDecoder {
    fn data(&mut self, data: &str, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        StreamDecoder::data(self, data, out)
    }

    fn cut(
        &mut self,
        error: ProviderError,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        StreamDecoder::cut(self, error, out)
    }

    fn is_done(&self) -> bool {
        StreamDecoder::is_done(self)
    }

    fn end_of_body(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        StreamDecoder::end_of_body(self, out)
    }
}

/// Returns the value only the first time it is seen (and non-empty).
fn announce(seen: &mut Option<String>, value: Option<Str<'_>>) -> Option<String> {
    let value = value.filter(|v| !v.as_str().is_empty())?;
    if seen.as_deref() == Some(value.as_str()) {
        return None;
    }
    let value = value.into_string();
    *seen = Some(value.clone());
    Some(value)
}

fn push_text(
    out: &mut VecDeque<ModelEvent>,
    text: Option<Str<'_>>,
    event: fn(String) -> ModelEvent,
) {
    if let Some(text) = text.filter(|t| !t.as_str().is_empty()) {
        out.push_back(event(text.into_string()));
    }
}

/// Decodes a complete `chat.completion` body into the events a stream of
/// the same answer would have produced (whole texts, one delta per call).
pub fn decode_completion(body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
    let completion: Completion = serde_json::from_slice(body)
        .map_err(|e| ProviderError::Protocol(format!("invalid chat completion: {e}")))?;
    if let Some(error) = completion.error {
        return Err(error_from_value(&error, IN_BODY_ERROR_STATUS));
    }
    let mut choices = completion.choices.unwrap_or_default();
    let first = choices.iter().position(|c| c.index == 0).unwrap_or(0);
    if first >= choices.len() {
        return Err(ProviderError::Protocol(
            "chat completion has no choices".into(),
        ));
    }
    let choice = choices.swap_remove(first);
    let mut events = Vec::new();
    let mut has_calls = false;
    if let Some(msg) = choice.message {
        let reasoning = msg.reasoning_content.or(msg.reasoning);
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            events.push(ModelEvent::ReasoningDelta(r));
        }
        if let Some(text) = msg.content.and_then(content_text) {
            let tokens = choice.logprobs.and_then(|l| l.content);
            events.push(text_event(text, tokens));
        }
        if let Some(r) = msg.refusal.filter(|r| !r.is_empty()) {
            events.push(ModelEvent::RefusalDelta(r));
        }
        for (index, call) in (0u32..).zip(msg.tool_calls.unwrap_or_default()) {
            has_calls = true;
            let arguments = match call.function.arguments {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s,
                Some(other) => other.to_string(),
            };
            events.push(ModelEvent::ToolCallDelta {
                index,
                id: call.id.filter(|s| !s.is_empty()),
                name: Some(call.function.name),
                arguments,
            });
        }
    }
    if let Some(usage) = completion.usage {
        events.push(ModelEvent::Usage(map_usage(usage)));
    }
    let reason = choice
        .finish_reason
        .as_deref()
        .map_or(FinishReason::Stop, |r| {
            finish_of(r, choice.stop_reason.as_ref())
        });
    events.push(ModelEvent::Finished(normalize_finish(reason, has_calls)));
    Ok(events)
}

/// Message content: a string, or text parts joined.
fn content_text(content: Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s,
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

pub(crate) fn map_usage(u: UsageWire) -> Usage {
    let input_tokens = u.prompt_tokens.unwrap_or(0);
    let output_tokens = u.completion_tokens.unwrap_or(0);
    Usage {
        input_tokens,
        output_tokens,
        total_tokens: u.total_tokens.unwrap_or(input_tokens + output_tokens),
        input_tokens_details: InputTokensDetails {
            cached_tokens: u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
        },
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: u
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        },
    }
}

/// `finish_reason`, and the stop string vLLM names in `stop_reason` when a
/// stop sequence ended the text (other servers do not say which).
fn finish_of(reason: &str, stop_reason: Option<&Value>) -> FinishReason {
    match (reason, stop_reason) {
        ("stop", Some(Value::String(s))) => FinishReason::StopSequence(s.clone()),
        _ => map_finish(reason),
    }
}

fn map_finish(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        // `function_call` is the legacy functions API's name.
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "completion_tests.rs"]
mod completion_tests;

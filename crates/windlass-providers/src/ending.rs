//! The end of a turn, shared by the item-based decoders (Responses API,
//! Anthropic Messages): usage and finish reason are held back until the
//! upstream's end event, then emitted once, in that order, after all content.

use std::collections::VecDeque;

use windlass_engine::{FinishReason, ModelEvent, ProviderError};
use windlass_protocol::Usage;

#[derive(Debug, Default)]
pub(crate) struct Ending {
    pub usage: Option<Usage>,
    pub finish: Option<FinishReason>,
    /// Whether the turn called tools (a plain "stop" then means tool calls).
    pub has_calls: bool,
    pub done: bool,
}

impl Ending {
    /// Emits usage then the finish reason and ends the turn.
    pub(crate) fn flush(&mut self, out: &mut VecDeque<ModelEvent>) {
        if self.done {
            return;
        }
        self.done = true;
        if let Some(usage) = self.usage.take() {
            out.push_back(ModelEvent::Usage(usage));
        }
        let reason = normalize_finish(
            self.finish.take().unwrap_or(FinishReason::Stop),
            self.has_calls,
        );
        out.push_back(ModelEvent::Finished(reason));
    }

    /// Reading stopped: complete when the finish reason already came,
    /// otherwise the turn failed with `error`.
    pub(crate) fn cut(
        &mut self,
        error: ProviderError,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if self.finish.is_some() {
            self.flush(out);
            return Ok(());
        }
        self.done = true;
        Err(error)
    }

    /// The upstream reported an error: the turn is over.
    pub(crate) fn fail(&mut self, error: ProviderError) -> Result<(), ProviderError> {
        self.done = true;
        Err(error)
    }
}

/// A plain `stop` after tool calls means tool calls (Ollama and older
/// llama.cpp report `stop`; some Responses and Messages servers likewise).
pub(crate) fn normalize_finish(reason: FinishReason, has_calls: bool) -> FinishReason {
    match reason {
        FinishReason::Stop if has_calls => FinishReason::ToolCalls,
        other => other,
    }
}

/// Usage from parts, totals computed.
pub(crate) fn usage(input: u64, output: u64, cached: u64, reasoning: u64) -> Usage {
    let mut u = Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
        ..Usage::default()
    };
    u.input_tokens_details.cached_tokens = cached;
    u.output_tokens_details.reasoning_tokens = reasoning;
    u
}

/// A JSON parse failure of an upstream event or body.
pub(crate) fn unreadable(what: &str, e: serde_json::Error) -> ProviderError {
    ProviderError::Protocol(format!("invalid {what}: {e}"))
}

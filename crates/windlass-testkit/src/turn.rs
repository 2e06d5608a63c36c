//! A [`Reply`] resolved against one concrete request: response id, model,
//! tool call ids and usage numbers are fixed here, so the streamed and the
//! non-streamed encoders share one source of truth.

use serde_json::{json, Value};

use crate::reply::{Reply, UsageMode};

/// Token counts reported for one answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UsageNumbers {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
    pub reasoning: u64,
}

impl UsageNumbers {
    /// The OpenAI `usage` object.
    pub(crate) fn to_json(self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
            "prompt_tokens_details": { "cached_tokens": self.cached },
            "completion_tokens_details": { "reasoning_tokens": self.reasoning },
        })
    }
}

/// Rough token estimate: one token per 4 characters, rounded up.
fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Everything needed to encode one completion answer.
pub(crate) struct Turn<'a> {
    pub reply: &'a Reply,
    /// `chatcmpl-...`
    pub id: String,
    /// Echo of the request's `model`.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
    /// Call id of each tool call, same order as `reply.tool_calls`.
    pub call_ids: Vec<String>,
    /// `None` when the reply says `no_usage()`.
    pub usage: Option<UsageNumbers>,
}

impl<'a> Turn<'a> {
    /// Resolve `reply` for a request whose raw body was `request_len` bytes.
    /// `next_call_id` hands out the numbers of automatic call ids.
    pub(crate) fn new(
        reply: &'a Reply,
        id: String,
        model: String,
        created: u64,
        request_len: usize,
        mut next_call_id: impl FnMut() -> u64,
    ) -> Self {
        let call_ids = reply
            .tool_calls
            .iter()
            .map(|c| match &c.id {
                Some(id) => id.clone(),
                None => format!("call_{}", next_call_id()),
            })
            .collect();
        let usage = Turn::usage_for(reply, request_len);
        Turn {
            reply,
            id,
            model,
            created,
            call_ids,
            usage,
        }
    }

    fn usage_for(reply: &Reply, request_len: usize) -> Option<UsageNumbers> {
        let reasoning = reply.reasoning_tokens.unwrap_or_else(|| {
            reply
                .reasoning
                .as_deref()
                .map_or(0, |r| estimate_tokens(r.chars().count()))
        });
        let (prompt, completion) = match reply.usage {
            UsageMode::None => return None,
            UsageMode::Explicit { prompt, completion } => (prompt, completion),
            UsageMode::Auto => {
                let output_chars = reply.content.as_deref().map_or(0, |c| c.chars().count())
                    + reply
                        .tool_calls
                        .iter()
                        .map(|c| c.name.chars().count() + c.arguments.chars().count())
                        .sum::<usize>();
                (
                    estimate_tokens(request_len).max(1),
                    // Completion tokens include reasoning tokens (OpenAI semantics).
                    estimate_tokens(output_chars).max(1) + reasoning,
                )
            }
        };
        Some(UsageNumbers {
            prompt,
            completion,
            cached: reply.cached_tokens,
            reasoning,
        })
    }

    /// The finish reason of the final choice.
    pub(crate) fn finish_reason(&self) -> &str {
        self.reply.effective_finish_reason()
    }
}

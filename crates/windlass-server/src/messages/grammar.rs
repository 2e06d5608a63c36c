//! The engine's stream events -> Anthropic's event grammar: one
//! `message_start` (then a `ping`), content blocks opened, changed and
//! stopped one at a time with increasing indices, one `message_delta` with
//! the stop reason and usage, one `message_stop`; or an `error` event
//! where the run fails. A pure state machine: events in, events out.

use windlass_protocol::anthropic::{
    BlockDelta, DeltaUsage, ErrorDetail, MessageDeltaBody, MessageEvent, OutputBlock,
    REDACTED_THINKING_PREFIX,
};
use windlass_protocol::{ContentPart, EventData, Item, ResponseResource};

use super::answer::{self, mcp_result, reasoning_text, started, stop_reason, Thinking};

/// Which engine item (and content part) the open block belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Part(usize, usize),
    Item(usize),
}

#[derive(Debug)]
struct Open {
    owner: Owner,
    index: usize,
    /// Tool input or thinking text already sent as deltas.
    streamed: bool,
}

/// One Messages stream's translation state.
#[derive(Debug)]
pub(crate) struct Grammar {
    /// Whether reasoning is shown as thinking blocks, with or without text.
    thinking: Thinking,
    next_index: usize,
    open: Option<Open>,
    /// `message_start` sent.
    started: bool,
    /// `message_stop` or `error` sent: nothing follows.
    ended: bool,
}

impl Grammar {
    pub(super) fn new(thinking: Thinking) -> Grammar {
        Grammar {
            thinking,
            next_index: 0,
            open: None,
            started: false,
            ended: false,
        }
    }

    /// The Messages events for one engine event, in order.
    pub(super) fn on(&mut self, event: &EventData) -> Vec<MessageEvent> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        match event {
            EventData::Created { response } | EventData::InProgress { response } => {
                self.start(response, &mut out)
            }
            EventData::OutputItemAdded { output_index, item } => {
                self.item_added(*output_index, item, &mut out)
            }
            EventData::ContentPartAdded {
                output_index,
                content_index,
                part: ContentPart::OutputText(_) | ContentPart::Refusal(_),
                ..
            } => self.open_text(Owner::Part(*output_index, *content_index), &mut out),
            EventData::OutputTextDelta {
                output_index,
                content_index,
                delta,
                ..
            }
            | EventData::RefusalDelta {
                output_index,
                content_index,
                delta,
                ..
            } => {
                let owner = Owner::Part(*output_index, *content_index);
                if !self.is_open(owner) {
                    self.open_text(owner, &mut out);
                }
                self.delta(
                    BlockDelta::TextDelta {
                        text: delta.clone(),
                    },
                    &mut out,
                );
            }
            EventData::ContentPartDone {
                output_index,
                content_index,
                ..
            } => self.close_if(Owner::Part(*output_index, *content_index), &mut out),
            EventData::ReasoningDelta {
                output_index,
                delta,
                ..
            }
            | EventData::ReasoningSummaryTextDelta {
                output_index,
                delta,
                ..
            } if self.thinking == Thinking::Shown => {
                self.thinking_delta(*output_index, delta, &mut out)
            }
            EventData::FunctionCallArgumentsDelta {
                output_index,
                delta,
                ..
            }
            | EventData::McpCallArgumentsDelta {
                output_index,
                delta,
                ..
            } if self.is_open(Owner::Item(*output_index)) && !delta.is_empty() => {
                self.delta(
                    BlockDelta::InputJsonDelta {
                        partial_json: delta.clone(),
                    },
                    &mut out,
                );
            }
            EventData::McpCallArgumentsDone {
                output_index,
                arguments,
                ..
            } => self.finish_input(*output_index, arguments, &mut out),
            EventData::OutputItemDone { output_index, item } => {
                self.item_done(*output_index, item, &mut out)
            }
            EventData::Completed { response }
            | EventData::Incomplete { response }
            | EventData::RequiresAction { response } => self.finish(response, &mut out),
            EventData::Failed { response } => {
                let (code, message) = response
                    .error
                    .as_ref()
                    .map_or(("server_error", "The response failed."), |e| {
                        (e.code.as_str(), e.message.as_str())
                    });
                self.fail(error_type(code), message, &mut out);
            }
            EventData::Cancelled { .. } => {
                self.fail("api_error", "The response was cancelled.", &mut out)
            }
            EventData::Error { error } => {
                let code = error.code.as_deref().unwrap_or(&error.kind);
                self.fail(error_type(code), &error.message, &mut out);
            }
            _ => {}
        }
        out
    }

    fn start(&mut self, response: &ResponseResource, out: &mut Vec<MessageEvent>) {
        if self.started {
            return;
        }
        self.started = true;
        out.push(MessageEvent::MessageStart {
            message: started(response),
        });
        out.push(MessageEvent::Ping);
    }

    fn is_open(&self, owner: Owner) -> bool {
        self.open.as_ref().is_some_and(|o| o.owner == owner)
    }

    fn open_block(&mut self, owner: Owner, block: OutputBlock, out: &mut Vec<MessageEvent>) {
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        out.push(MessageEvent::ContentBlockStart {
            index,
            content_block: block,
        });
        self.open = Some(Open {
            owner,
            index,
            streamed: false,
        });
    }

    fn open_text(&mut self, owner: Owner, out: &mut Vec<MessageEvent>) {
        let block = OutputBlock::Text {
            text: String::new(),
            citations: None,
        };
        self.open_block(owner, block, out);
    }

    /// A block that opens and closes at once (a tool's result).
    fn whole_block(&mut self, block: OutputBlock, out: &mut Vec<MessageEvent>) {
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        out.push(MessageEvent::ContentBlockStart {
            index,
            content_block: block,
        });
        out.push(MessageEvent::ContentBlockStop { index });
    }

    fn delta(&mut self, delta: BlockDelta, out: &mut Vec<MessageEvent>) {
        if let Some(open) = self.open.as_mut() {
            open.streamed = true;
            out.push(MessageEvent::ContentBlockDelta {
                index: open.index,
                delta,
            });
        }
    }

    fn close(&mut self, out: &mut Vec<MessageEvent>) {
        if let Some(open) = self.open.take() {
            out.push(MessageEvent::ContentBlockStop { index: open.index });
        }
    }

    fn close_if(&mut self, owner: Owner, out: &mut Vec<MessageEvent>) {
        if self.is_open(owner) {
            self.close(out);
        }
    }

    fn item_added(&mut self, at: usize, item: &Item, out: &mut Vec<MessageEvent>) {
        let block = match item {
            Item::FunctionCall(c) => OutputBlock::ToolUse {
                id: c.call_id.clone(),
                name: c.name.clone(),
                input: empty_object(),
            },
            Item::McpCall(c) => OutputBlock::McpToolUse {
                id: c.id.clone(),
                name: c.name.clone(),
                server_name: c.server_label.clone(),
                input: empty_object(),
            },
            // Thinking opens with its first text (a redacted block has none).
            _ => return,
        };
        self.open_block(Owner::Item(at), block, out);
    }

    fn thinking_delta(&mut self, at: usize, delta: &str, out: &mut Vec<MessageEvent>) {
        if !self.is_open(Owner::Item(at)) {
            self.open_thinking(at, out);
        }
        self.delta(
            BlockDelta::ThinkingDelta {
                thinking: delta.to_owned(),
            },
            out,
        );
    }

    fn open_thinking(&mut self, at: usize, out: &mut Vec<MessageEvent>) {
        let block = OutputBlock::Thinking {
            thinking: String::new(),
            signature: String::new(),
        };
        self.open_block(Owner::Item(at), block, out);
    }

    /// Sends the whole input if none was streamed, and closes the block.
    fn finish_input(&mut self, at: usize, arguments: &str, out: &mut Vec<MessageEvent>) {
        if !self.is_open(Owner::Item(at)) {
            return;
        }
        let streamed = self.open.as_ref().is_some_and(|o| o.streamed);
        if !streamed && !arguments.is_empty() {
            self.delta(
                BlockDelta::InputJsonDelta {
                    partial_json: arguments.to_owned(),
                },
                out,
            );
        }
        self.close(out);
    }

    fn item_done(&mut self, at: usize, item: &Item, out: &mut Vec<MessageEvent>) {
        match item {
            Item::FunctionCall(c) => self.finish_input(at, &c.arguments, out),
            Item::McpCall(c) => {
                self.finish_input(at, &c.arguments, out);
                self.whole_block(mcp_result(c), out);
            }
            Item::Reasoning(r) if self.thinking.blocks() => {
                let sealed = r.encrypted_content.as_deref().unwrap_or_default();
                if let Some(data) = sealed.strip_prefix(REDACTED_THINKING_PREFIX) {
                    let block = OutputBlock::RedactedThinking {
                        data: data.to_owned(),
                    };
                    self.whole_block(block, out);
                    return;
                }
                if !self.is_open(Owner::Item(at)) {
                    // Not streamed (or empty): the whole text at once.
                    self.open_thinking(at, out);
                    let text = match self.thinking {
                        Thinking::Omitted => String::new(),
                        _ => reasoning_text(r),
                    };
                    if !text.is_empty() {
                        self.delta(BlockDelta::ThinkingDelta { thinking: text }, out);
                    }
                }
                if !sealed.is_empty() {
                    let signature = sealed.to_owned();
                    self.delta(BlockDelta::SignatureDelta { signature }, out);
                }
                self.close(out);
            }
            Item::Compaction(c) => self.whole_block(answer::compaction(c), out),
            Item::WebSearchCall(_) | Item::CodeInterpreterCall(_) => {
                if let Some([call, result]) = super::server_blocks::blocks(item) {
                    self.server_call(at, call, result, out);
                }
            }
            Item::Message(_) => {
                if matches!(self.open, Some(Open { owner: Owner::Part(o, _), .. }) if o == at) {
                    self.close(out);
                }
            }
            _ => {}
        }
    }

    /// A hosted call, once it ran: its `server_tool_use` (the input in one
    /// delta) and its result block, whole. Written at the end so two calls
    /// of one turn never interleave.
    fn server_call(
        &mut self,
        at: usize,
        call: OutputBlock,
        result: OutputBlock,
        out: &mut Vec<MessageEvent>,
    ) {
        let OutputBlock::ServerToolUse { id, name, input } = call else {
            return;
        };
        let start = OutputBlock::ServerToolUse {
            id,
            name,
            input: empty_object(),
        };
        self.open_block(Owner::Item(at), start, out);
        self.delta(
            BlockDelta::InputJsonDelta {
                partial_json: input.to_string(),
            },
            out,
        );
        self.close(out);
        self.whole_block(result, out);
    }

    fn finish(&mut self, response: &ResponseResource, out: &mut Vec<MessageEvent>) {
        self.start(response, out);
        self.close(out);
        let usage = answer::usage(response.usage.as_ref());
        out.push(MessageEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(stop_reason(response)),
                stop_sequence: answer::stop_sequence(response),
            },
            usage: DeltaUsage {
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                cache_creation_input_tokens: usage.cache_creation_input_tokens,
                cache_read_input_tokens: usage.cache_read_input_tokens,
            },
        });
        out.push(MessageEvent::MessageStop);
        self.ended = true;
    }

    fn fail(&mut self, kind: &str, message: &str, out: &mut Vec<MessageEvent>) {
        out.push(MessageEvent::Error {
            error: ErrorDetail {
                kind: kind.to_owned(),
                message: message.to_owned(),
            },
        });
        self.ended = true;
    }
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// Anthropic's error type for a failure's code (`upstream_rate_limited`,
/// `upstream_timeout`, `invalid_request_error`, ...).
pub(crate) fn error_type(code: &str) -> &'static str {
    if code.contains("rate_limit") {
        "rate_limit_error"
    } else if code.contains("timeout") {
        "timeout_error"
    } else if code.contains("overloaded") {
        "overloaded_error"
    } else if code.contains("invalid_request") || code.contains("unsupported") {
        "invalid_request_error"
    } else {
        "api_error"
    }
}

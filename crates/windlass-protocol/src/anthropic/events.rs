//! The Messages stream: `message_start`, content blocks opened, changed and
//! stopped in order, `message_delta` (stop reason, usage), `message_stop`,
//! `ping` and `error`. Each is sent as `event: <type>\ndata: <json>`.

use serde::{Deserialize, Serialize};

use super::error::ErrorDetail;
use super::message::{Message, OutputBlock, StopReason};

/// One Messages stream event; the variant is the SSE `event:` name and the JSON `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum MessageEvent {
    MessageStart {
        message: Message,
    },
    ContentBlockStart {
        index: usize,
        content_block: OutputBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: DeltaUsage,
    },
    MessageStop,
    Ping,
    Error {
        error: ErrorDetail,
    },
}

impl MessageEvent {
    /// The SSE `event:` name, equal to the JSON `type`.
    pub fn event_type(&self) -> &'static str {
        match self {
            MessageEvent::MessageStart { .. } => "message_start",
            MessageEvent::ContentBlockStart { .. } => "content_block_start",
            MessageEvent::ContentBlockDelta { .. } => "content_block_delta",
            MessageEvent::ContentBlockStop { .. } => "content_block_stop",
            MessageEvent::MessageDelta { .. } => "message_delta",
            MessageEvent::MessageStop => "message_stop",
            MessageEvent::Ping => "ping",
            MessageEvent::Error { .. } => "error",
        }
    }
}

/// The `delta` of a `content_block_delta` event, by block kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of Anthropic's Messages API reference,
// named as it names them.
#[allow(missing_docs)]
pub enum BlockDelta {
    TextDelta { text: String },
    InputJsonDelta { partial_json: String },
    ThinkingDelta { thinking: String },
    SignatureDelta { signature: String },
}

/// `message_delta.delta`: why and where the message stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct MessageDeltaBody {
    pub stop_reason: Option<StopReason>,
    pub stop_sequence: Option<String>,
}

/// `message_delta.usage`: the totals at the end of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
// Fields mirror Anthropic's Messages API reference, named as it names them.
#[allow(missing_docs)]
pub struct DeltaUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
}

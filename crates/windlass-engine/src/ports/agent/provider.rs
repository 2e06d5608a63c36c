//! Called by the loop each model turn; a port so every upstream kind plugs in the same way.
//!
//! The model port: one upstream turn from the canonical transcript.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use serde_json::Value;
use windlass_protocol::{
    CreateResponseRequest, Item, LogProb, ReasoningEffort, ReasoningSummary, TextFormat, Usage,
    Verbosity,
};

/// A function the model may call, as the upstream sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTool {
    /// The function's name as the model calls it.
    pub name: String,
    /// What the function does, for the model.
    pub description: Option<String>,
    /// The JSON schema of its arguments.
    pub parameters: Value,
    /// Whether the upstream must follow the schema exactly.
    pub strict: Option<bool>,
}

/// `tool_choice` for one model turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelToolChoice {
    /// The model decides whether to call a tool.
    #[default]
    Auto,
    /// The model may not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call this function.
    Function(String),
}

/// Everything one upstream call needs. The transcript holds only items the
/// upstream understands: messages, function calls and their outputs, reasoning.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest {
    /// The model id the upstream serves.
    pub model: String,
    /// The system instructions, sent ahead of the transcript.
    pub instructions: Option<String>,
    /// The items of this turn, in order.
    pub transcript: Transcript,
    /// Shared by every turn of a response (built once, not per turn).
    pub tools: Arc<[ModelTool]>,
    /// Which tools the model may or must call.
    pub tool_choice: ModelToolChoice,
    /// Whether the model may make several calls in one turn (the upstream's default when unset).
    pub parallel_tool_calls: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass sampled from.
    pub top_p: Option<f64>,
    /// Sequences that end the text (empty: none).
    pub stop: Vec<String>,
    /// Sample from the `top_k` likeliest tokens only.
    pub top_k: Option<u64>,
    /// Penalty for tokens already present.
    pub presence_penalty: Option<f64>,
    /// Penalty growing with how often a token already appeared.
    pub frequency_penalty: Option<f64>,
    /// Most output tokens of this turn.
    pub max_output_tokens: Option<u64>,
    /// How many most likely alternatives to report per token (with
    /// [`ModelRequest::logprobs`]).
    pub top_logprobs: Option<u32>,
    /// Per-token log probabilities of the output text are wanted: `include`
    /// names `message.output_text.logprobs` (without it OpenAI shows none,
    /// whatever `top_logprobs` says).
    pub logprobs: bool,
    /// `text.format`: plain text, a JSON object or a JSON schema.
    pub text_format: Option<TextFormat>,
    /// `text.verbosity`.
    pub verbosity: Option<Verbosity>,
    /// `reasoning.effort`, for reasoning models.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `reasoning.summary`: the reasoning is wanted as a summary.
    pub reasoning_summary: Option<ReasoningSummary>,
    /// `service_tier` as the client asked for it (already checked to be
    /// one of OpenAI's values).
    pub service_tier: Option<String>,
    /// `prompt_cache_key`: a routing hint for the upstream's prompt cache.
    pub prompt_cache_key: Option<String>,
    /// `safety_identifier`: a stable id of the end user, for the
    /// upstream's abuse detection.
    pub safety_identifier: Option<String>,
    /// `user` (OpenAI's older end-user field).
    pub user: Option<String>,
    /// Stream from the upstream (`true`) or ask for one complete body.
    pub stream: bool,
}

/// The `include` value asking for the output text's log probabilities.
pub const INCLUDE_LOGPROBS: &str = "message.output_text.logprobs";

impl ModelRequest {
    /// Sets everything a turn takes from the client's request as is:
    /// sampling, logprobs, text and reasoning options, routing hints and
    /// end-user ids. Every turn of a response sends the same.
    pub fn apply_options(&mut self, req: &CreateResponseRequest) {
        self.parallel_tool_calls = req.parallel_tool_calls;
        self.temperature = req.temperature;
        self.top_p = req.top_p;
        self.stop = req.stop.clone().unwrap_or_default();
        self.top_k = req.top_k;
        self.presence_penalty = req.presence_penalty;
        self.frequency_penalty = req.frequency_penalty;
        self.max_output_tokens = req.max_output_tokens;
        self.top_logprobs = req.top_logprobs;
        self.logprobs = req.include.iter().flatten().any(|i| i == INCLUDE_LOGPROBS);
        self.text_format = req.text.as_ref().and_then(|t| t.format.clone());
        self.verbosity = req.text.as_ref().and_then(|t| t.verbosity);
        self.reasoning_effort = req.reasoning.as_ref().and_then(|r| r.effort);
        self.reasoning_summary = req.reasoning.as_ref().and_then(|r| r.summary);
        self.service_tier = req.service_tier.clone();
        self.prompt_cache_key = req.prompt_cache_key.clone();
        self.safety_identifier = req.safety_identifier.clone();
        self.user = req.user.clone();
    }
}

/// The items one upstream call carries, in order: a `head` shared by every
/// turn of a response (its history and input in upstream form, built once)
/// followed by this turn's own items. A turn therefore copies only what is
/// new since the response started, not the whole conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    head: Arc<[Item]>,
    tail: Vec<Item>,
}

impl Transcript {
    /// A transcript of the shared `head` followed by this turn's `tail`.
    pub fn new(head: Arc<[Item]>, tail: Vec<Item>) -> Transcript {
        Transcript { head, tail }
    }

    /// The items in order: the head, then the tail.
    pub fn iter(&self) -> std::iter::Chain<std::slice::Iter<'_, Item>, std::slice::Iter<'_, Item>> {
        self.head.iter().chain(self.tail.iter())
    }

    /// How many items, head and tail.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether there are no items at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends an item after the others.
    pub fn push(&mut self, item: Item) {
        self.tail.push(item);
    }

    /// The items as one vector (a copy).
    pub fn to_vec(&self) -> Vec<Item> {
        self.iter().cloned().collect()
    }
}

impl From<Vec<Item>> for Transcript {
    fn from(tail: Vec<Item>) -> Transcript {
        Transcript {
            head: Arc::from(Vec::new()),
            tail,
        }
    }
}

impl<'a> IntoIterator for &'a Transcript {
    type Item = &'a Item;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, Item>, std::slice::Iter<'a, Item>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Why the upstream stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// One of the request's stop sequences ended the text (the upstream
    /// said which).
    StopSequence(String),
    /// The output token limit cut the answer.
    Length,
    /// The model stopped to call tools.
    ToolCalls,
    /// The upstream's content filter stopped the answer.
    ContentFilter,
    /// A reason this list does not know, as the upstream spelled it.
    Other(String),
}

/// One piece of a model turn, in the order the upstream produced it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of the assistant's text.
    TextDelta(String),
    /// Output text with the log probabilities of its tokens (asked for with
    /// [`ModelRequest::logprobs`]); otherwise the same as `TextDelta`.
    TextDeltaLogprobs {
        /// The piece of text.
        delta: String,
        /// The log-probabilities of its tokens.
        logprobs: Vec<LogProb>,
    },
    /// A piece of the model's reasoning text.
    ReasoningDelta(String),
    /// Text of the reasoning summary's part number `summary_index` (a new
    /// index starts a new part of the same reasoning item).
    ReasoningSummaryDelta {
        /// Which summary part it belongs to.
        summary_index: u32,
        /// The piece of summary text.
        delta: String,
    },
    /// The opaque, upstream-verifiable form of the reasoning just streamed
    /// (OpenAI `encrypted_content`, an Anthropic thinking `signature`): it
    /// is kept on the reasoning item, which it closes, so a later turn can
    /// replay the item to the same kind of upstream.
    ReasoningEncrypted(String),
    /// A piece of a refusal.
    RefusalDelta(String),
    /// A fragment of tool call number `index`: the first fragment of a call
    /// carries its `id` and `name`, later ones only argument text.
    ToolCallDelta {
        /// Which call of the turn it belongs to.
        index: u32,
        /// The call id (first delta of a call only).
        id: Option<String>,
        /// The function's name (first delta of a call only).
        name: Option<String>,
        /// A piece of the JSON arguments.
        arguments: String,
    },
    /// The turn's token usage.
    Usage(Usage),
    /// The turn ended, for this reason.
    Finished(FinishReason),
}

/// One model turn as it streams: events until `Finished`, or an error.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// A model the upstream serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The model id.
    pub id: String,
    /// Who owns it, as the upstream says.
    pub owned_by: Option<String>,
    /// When it was created (Unix seconds), as the upstream says.
    pub created: Option<u64>,
}

/// How many input tokens a request would take, and how that was known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCount {
    /// Input tokens the request takes.
    pub input_tokens: u64,
    /// Whether the upstream counted them or Windlass estimated them.
    pub method: CountMethod,
}

/// How a token count was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CountMethod {
    /// The upstream's own tokenizer counted the request as it would be sent.
    Upstream,
    /// Windlass estimated it: the upstream offers no tokenizer.
    Estimate,
}

/// Why an upstream call failed. Dropping a [`ModelStream`] aborts the call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The upstream could not be reached.
    #[error("upstream unreachable: {0}")]
    Connect(String),
    /// The upstream did not answer in time, in this phase.
    #[error("upstream timed out ({0})")]
    Timeout(TimeoutPhase),
    /// The upstream answered with an error status.
    #[error("upstream answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The upstream's error message.
        message: String,
        /// The upstream's error code, when it gave one.
        code: Option<String>,
    },
    /// The stream ended before the turn finished.
    #[error("upstream stream ended early: {0}")]
    Interrupted(String),
    /// The upstream sent something its wire format does not allow.
    #[error("upstream sent something unreadable: {0}")]
    Protocol(String),
    /// The request cannot be expressed for this upstream (a 400 for the client).
    #[error("{message}")]
    Unsupported {
        /// What this upstream cannot carry, for the client.
        message: String,
        /// The request field at fault, when there is one.
        param: Option<String>,
    },
}

/// Which wait of an upstream call timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// Opening the connection.
    Connect,
    /// Waiting for the first byte of the answer.
    FirstByte,
    /// Waiting between two chunks of the stream.
    Idle,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::FirstByte => "waiting for the first byte",
            TimeoutPhase::Idle => "idle between chunks",
        })
    }
}

/// A model server. Implementations live in `windlass-providers`.
#[async_trait::async_trait]
pub trait ModelProvider: Send + Sync {
    /// Starts one model turn. Errors before the first byte are returned here
    /// (after the provider's own retries); later ones come through the stream.
    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError>;

    /// The models the upstream serves.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError>;

    /// Checks, without calling the upstream, that `request` can be expressed
    /// for it; the engine calls this on new input before anything starts, so
    /// such input is a 400 that writes nothing.
    fn check(&self, _request: &ModelRequest) -> Result<(), ProviderError> {
        Ok(())
    }

    /// How many input tokens `request` (instructions, transcript, tools)
    /// takes on the upstream that would serve it.
    async fn count_tokens(&self, _request: &ModelRequest) -> Result<TokenCount, ProviderError> {
        Err(ProviderError::Unsupported {
            message: "this upstream cannot count tokens".into(),
            param: None,
        })
    }

    /// The context length (prompt plus output, in tokens) of `model` as the
    /// upstream serves it, when known from configuration or the upstream.
    async fn context_length(&self, _model: &str) -> Result<Option<u64>, ProviderError> {
        Ok(None)
    }
}

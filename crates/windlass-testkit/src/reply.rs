//! [`Reply`]: the builder describing one scripted upstream answer.

use std::time::Duration;

/// Default number of characters per streamed text / arguments piece.
pub const DEFAULT_CHUNK_CHARS: usize = 4;

/// One function tool call inside a [`Reply`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallSpec {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

impl ToolCallSpec {
    /// A call of function `name` with the JSON-encoded `arguments` string
    /// (sent verbatim, not validated). The call id is assigned by the server
    /// (`call_<n>`, counting from 1 per server) unless set with [`ToolCallSpec::id`].
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCallSpec {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Use this exact call id instead of an automatic one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// How usage numbers are reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UsageMode {
    /// Computed from request / output lengths (always non-zero).
    Auto,
    /// Exactly these prompt / completion token counts.
    Explicit { prompt: u64, completion: u64 },
    /// No usage at all (neither in the usage chunk nor in the JSON body).
    None,
}

/// How a streamed reply ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// All chunks, then `data: [DONE]`.
    Done,
    /// `n` chunks, then the connection is aborted (no `[DONE]`).
    Cut(usize),
    /// `n` chunks, then nothing more, ever (connection left open).
    Stall(usize),
    /// `n` chunks, then an in-stream `data: {"error":{..}}` event and `[DONE]`
    /// (what vLLM does when generation fails mid-stream).
    ErrorEvent(usize, String),
}

/// What kind of answer this is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReplyKind {
    /// A normal chat completion (streamed or not, following the request).
    Completion,
    /// An HTTP error status with this exact body.
    Error {
        status: u16,
        body: String,
        /// Whether `body` parses as JSON (decides the content type).
        is_json: bool,
    },
}

/// One scripted upstream answer. Build with a constructor
/// ([`Reply::text`], [`Reply::tool_call`], [`Reply::error`], ...) and refine
/// with the chainable modifiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub(crate) kind: ReplyKind,
    pub(crate) content: Option<String>,
    pub(crate) reasoning: Option<String>,
    pub(crate) reasoning_field: String,
    /// The opaque form of the reasoning: Responses `encrypted_content`,
    /// Anthropic thinking `signature` (chat completions has none).
    pub(crate) reasoning_signature: Option<String>,
    pub(crate) tool_calls: Vec<ToolCallSpec>,
    pub(crate) usage: UsageMode,
    pub(crate) cached_tokens: u64,
    pub(crate) reasoning_tokens: Option<u64>,
    pub(crate) chunk_chars: usize,
    pub(crate) delay_between_chunks: Option<Duration>,
    pub(crate) first_byte_delay: Option<Duration>,
    pub(crate) stall: bool,
    pub(crate) end: StreamEnd,
    pub(crate) finish_reason: Option<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) echo_tool_output: bool,
    pub(crate) assistant: bool,
    /// Chat completions wire: content comes with per-token logprobs.
    pub(crate) logprobs: bool,
    /// A stop sequence ended the text: vLLM's `stop_reason` on the chat
    /// wire, `stop_reason: stop_sequence` with `stop_sequence` on
    /// Anthropic's.
    pub(crate) stop_sequence: Option<String>,
}

impl Reply {
    fn base(kind: ReplyKind) -> Self {
        Reply {
            kind,
            content: None,
            reasoning: None,
            reasoning_field: "reasoning_content".to_owned(),
            reasoning_signature: None,
            tool_calls: Vec::new(),
            usage: UsageMode::Auto,
            cached_tokens: 0,
            reasoning_tokens: None,
            chunk_chars: DEFAULT_CHUNK_CHARS,
            delay_between_chunks: None,
            first_byte_delay: None,
            stall: false,
            end: StreamEnd::Done,
            finish_reason: None,
            headers: Vec::new(),
            echo_tool_output: false,
            assistant: false,
            logprobs: false,
            stop_sequence: None,
        }
    }

    /// The scripted assistant: the reply is worked out from each request
    /// (calls an offered tool the user names, answers "reply with exactly",
    /// recalls a code word, summarises on a compaction prompt). Meant as the
    /// default reply; see the `assistant` module for the rules.
    pub fn assistant() -> Self {
        let mut reply = Reply::text("");
        reply.assistant = true;
        reply
    }

    /// Appends the content of the request's last `tool` message to the text:
    /// a model that answers from a tool's output, which a test can check
    /// really went through the client.
    pub fn echo_tool_output(mut self) -> Self {
        self.echo_tool_output = true;
        self
    }

    /// This reply as sent for `request`: with [`Reply::echo_tool_output`],
    /// the last tool message's content is appended to the text.
    pub(crate) fn for_request(
        self: std::sync::Arc<Self>,
        request: &serde_json::Value,
    ) -> std::sync::Arc<Self> {
        if self.assistant {
            return std::sync::Arc::new(crate::assistant::respond(request));
        }
        if !self.echo_tool_output {
            return self;
        }
        let mut reply = (*self).clone();
        {
            let last_tool = request
                .get("messages")
                .and_then(serde_json::Value::as_array)
                .and_then(|m| {
                    m.iter()
                        .rev()
                        .find(|m| m.get("role").and_then(|r| r.as_str()) == Some("tool"))
                })
                .and_then(|m| m.get("content"))
                .map(|c| match c.as_str() {
                    Some(s) => s.to_owned(),
                    None => c.to_string(),
                })
                .unwrap_or_default();
            reply.content = Some(reply.content.unwrap_or_default() + &last_tool);
        }
        std::sync::Arc::new(reply)
    }

    /// Assistant text. Streamed as `delta.content` pieces of
    /// [`chunk_chars`](Reply::chunk_chars) characters.
    pub fn text(text: impl Into<String>) -> Self {
        let mut r = Reply::base(ReplyKind::Completion);
        r.content = Some(text.into());
        r
    }

    /// A single tool call, no text (`content: null`, `finish_reason: "tool_calls"`).
    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Reply::tool_calls([ToolCallSpec::new(name, arguments)])
    }

    /// Several tool calls in one turn, streamed one after another with
    /// increasing `index`.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCallSpec>) -> Self {
        let mut r = Reply::base(ReplyKind::Completion);
        r.tool_calls = calls.into_iter().collect();
        r
    }

    /// Text content followed by tool calls in the same turn.
    pub fn text_then_tools(
        text: impl Into<String>,
        calls: impl IntoIterator<Item = ToolCallSpec>,
    ) -> Self {
        Reply::text(text).and_tool_calls(calls)
    }

    /// An HTTP error with an OpenAI-shaped body
    /// `{"error":{"message","type","code"}}` (`code` is the numeric status,
    /// as vLLM does; `type` derives from the status).
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        let body = crate::error_body::error_body(status, &message.into()).to_string();
        Reply::base(ReplyKind::Error {
            status,
            body,
            is_json: true,
        })
    }

    /// An HTTP error with exactly this body (sent as `application/json`
    /// when it parses as JSON, `text/plain` otherwise).
    pub fn error_raw(status: u16, body: impl Into<String>) -> Self {
        let body = body.into();
        let is_json = serde_json::from_str::<serde_json::Value>(&body).is_ok();
        Reply::base(ReplyKind::Error {
            status,
            body,
            is_json,
        })
    }

    /// Append a tool call after whatever the reply already has.
    pub fn and_tool_call(self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.and_tool_calls([ToolCallSpec::new(name, arguments)])
    }

    /// Append several tool calls.
    pub fn and_tool_calls(mut self, calls: impl IntoIterator<Item = ToolCallSpec>) -> Self {
        self.tool_calls.extend(calls);
        self
    }

    /// Set the call id of the most recently added tool call.
    ///
    /// # Panics
    /// If the reply has no tool call yet.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        let last = self
            .tool_calls
            .last_mut()
            .expect("with_call_id: the reply has no tool call");
        last.id = Some(id.into());
        self
    }

    /// Reasoning text, sent before the content as `reasoning_content` deltas
    /// (vLLM / llama.cpp / DeepSeek style) and as `message.reasoning_content`
    /// in non-streamed replies.
    pub fn reasoning(mut self, text: impl Into<String>) -> Self {
        self.reasoning = Some(text.into());
        self
    }

    /// Sends log probabilities with the content (chat completions wire):
    /// each streamed piece is one token, `logprob` -0.5, with itself and
    /// `"~"` as top alternatives; a whole completion has one token per piece.
    pub fn logprobs(mut self) -> Self {
        self.logprobs = true;
        self
    }

    /// Name of the reasoning field (default `reasoning_content`; newer vLLM
    /// versions use `reasoning`).
    pub fn reasoning_field(mut self, name: impl Into<String>) -> Self {
        self.reasoning_field = name.into();
        self
    }

    /// The sealed form of the reasoning, sent by the Responses API wire as
    /// the reasoning item's `encrypted_content` and by the Anthropic wire as
    /// the thinking block's `signature` (ignored by chat completions).
    pub fn reasoning_signature(mut self, sealed: impl Into<String>) -> Self {
        self.reasoning_signature = Some(sealed.into());
        self
    }

    /// Report exactly these token counts (`total_tokens` is their sum).
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = UsageMode::Explicit {
            prompt: prompt_tokens,
            completion: completion_tokens,
        };
        self
    }

    /// `usage.prompt_tokens_details.cached_tokens` (default 0).
    pub fn cached_tokens(mut self, n: u64) -> Self {
        self.cached_tokens = n;
        self
    }

    /// `usage.completion_tokens_details.reasoning_tokens` (default: estimated
    /// from the reasoning text, 0 without reasoning).
    pub fn reasoning_tokens(mut self, n: u64) -> Self {
        self.reasoning_tokens = Some(n);
        self
    }

    /// Send no usage at all, even when the request asks for it.
    pub fn no_usage(mut self) -> Self {
        self.usage = UsageMode::None;
        self
    }

    /// Split streamed text, reasoning and arguments into pieces of `n`
    /// characters (default 4; 0 means "one piece per field").
    pub fn chunk_chars(mut self, n: usize) -> Self {
        self.chunk_chars = n;
        self
    }

    /// Wait this long before each streamed chunk after the first
    /// (inter-token latency). No delay by default.
    pub fn delay_between_chunks(mut self, delay: Duration) -> Self {
        self.delay_between_chunks = Some(delay);
        self
    }

    /// Wait this long before sending the response headers (time to first
    /// byte). Applies to streamed, non-streamed and error replies.
    pub fn first_byte_delay(mut self, delay: Duration) -> Self {
        self.first_byte_delay = Some(delay);
        self
    }

    /// Accept the request but never send the response headers.
    pub fn stall(mut self) -> Self {
        self.stall = true;
        self
    }

    /// Stream `n` chunks (SSE data events, the initial role chunk included),
    /// then hang forever without closing and without `[DONE]`.
    /// Streamed replies only.
    pub fn stall_after(mut self, n_chunks: usize) -> Self {
        self.end = StreamEnd::Stall(n_chunks);
        self
    }

    /// Stream `n` chunks (role chunk included), then abort the connection
    /// without `[DONE]` (the client sees a truncated body).
    /// Streamed replies only.
    pub fn cut_after(mut self, n_chunks: usize) -> Self {
        self.end = StreamEnd::Cut(n_chunks);
        self
    }

    /// Stream `n` chunks, then an in-stream error event
    /// `data: {"error":{"message",..}}` followed by `data: [DONE]`.
    /// Streamed replies only.
    pub fn error_event_after(mut self, n_chunks: usize, message: impl Into<String>) -> Self {
        self.end = StreamEnd::ErrorEvent(n_chunks, message.into());
        self
    }

    /// Override the finish reason (default `"stop"`, or `"tool_calls"` when
    /// the reply has tool calls).
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// The text ended at this stop sequence (as vLLM and Anthropic report it).
    pub fn stop_sequence(mut self, sequence: impl Into<String>) -> Self {
        self.stop_sequence = Some(sequence.into());
        self
    }

    /// Add a response header (e.g. `retry-after` on a 429).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The finish reason this reply will report.
    pub(crate) fn effective_finish_reason(&self) -> &str {
        match &self.finish_reason {
            Some(r) => r,
            None if self.tool_calls.is_empty() => "stop",
            None => "tool_calls",
        }
    }
}

impl Default for Reply {
    /// The reply served when nothing is scripted: a 500 error saying
    /// "no scripted reply".
    fn default() -> Self {
        Reply::error(500, "windlass-testkit: no scripted reply")
    }
}

//! Hooks: `UserPromptSubmit`, `PreToolUse`, `PostToolUse`.
//!
//! `UserPromptSubmit` runs in the client before a query is prepared. The tool
//! hooks run inside the engine as its [`Policy`], so they gate every call the
//! model makes, whoever executes it: the engine (auto mode) or the caller
//! (manual mode).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use windlass_engine::{
    CallDecision, Policy, PolicyContext, RunEvent, ToolCall, ToolDefinition,
    ToolResult as EngineToolResult,
};
use windlass_protocol::{StreamEvent, ToolOutput};

use super::tool::{arguments_value, ToolOutcome};

/// Fired once per [`Client::query`](super::Client::query), never on a continuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPromptSubmit {
    /// The prompt as the caller sent it.
    pub prompt: String,
}

/// What a `UserPromptSubmit` hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptDecision {
    /// Send the prompt as it is (and skip the remaining hooks).
    Allow,
    /// Refuse the query: `query()` returns [`SdkError::PromptBlocked`](super::SdkError::PromptBlocked).
    Block {
        /// Why; `query()` returns it in the error.
        reason: String,
    },
    /// Send this prompt instead.
    Rewrite(String),
}

/// Fired before each tool call the model makes, in the order of the calls.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolUse {
    /// The call id the model gave.
    pub call_id: String,
    /// The tool the model called.
    pub tool_name: String,
    /// The arguments as the model sent them (a JSON string when they do not parse).
    pub input: Value,
    /// Model turns made so far in this run.
    pub turn: u32,
}

/// What a `PreToolUse` hook decided.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolDecision {
    /// Run the call (and skip the remaining hooks).
    Allow,
    /// Do not run it: the model gets an error result saying it was blocked
    /// and why, the stream yields a [`Block::ToolUseError`](super::Block::ToolUseError).
    Block {
        /// Why; the model reads it in the error result.
        reason: String,
    },
    /// Run it with this input instead of the model's.
    Rewrite(Value),
}

/// Fired after each tool result the model will see (auto mode: after the
/// engine ran the tool; manual mode: in `add_tool_result`).
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolUse {
    /// The call id the model gave.
    pub call_id: String,
    /// The tool that ran.
    pub tool_name: String,
    /// The input the tool ran with.
    pub input: Value,
    /// The result the model will see unless a hook replaces it.
    pub result: ToolOutcome,
}

type PromptHook =
    Arc<dyn Fn(UserPromptSubmit) -> BoxFuture<'static, Option<PromptDecision>> + Send + Sync>;
type PreHook = Arc<dyn Fn(PreToolUse) -> BoxFuture<'static, Option<ToolDecision>> + Send + Sync>;
type PostHook = Arc<dyn Fn(PostToolUse) -> BoxFuture<'static, Option<ToolOutcome>> + Send + Sync>;

/// The agent's hooks. Several hooks of a kind run in the order they were
/// added; a hook returns `None` to pass, and the first `Some(decision)` wins
/// (later hooks of that kind do not run for that event).
///
/// ```
/// use windlass::sdk::{Hooks, ToolDecision};
///
/// let hooks = Hooks::new()
///     .on_user_prompt_submit(|ev| async move {
///         println!("prompt: {}", ev.prompt);
///         None
///     })
///     .on_pre_tool_use(|ev| async move {
///         (ev.tool_name == "rm").then(|| ToolDecision::Block {
///             reason: "not on this machine".into(),
///         })
///     })
///     .on_post_tool_use(|ev| async move {
///         println!("{} -> {}", ev.tool_name, ev.result.content);
///         None
///     });
/// assert!(!hooks.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct Hooks {
    prompt: Vec<PromptHook>,
    pre: Vec<PreHook>,
    post: Vec<PostHook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("user_prompt_submit", &self.prompt.len())
            .field("pre_tool_use", &self.pre.len())
            .field("post_tool_use", &self.post.len())
            .finish()
    }
}

impl Hooks {
    /// No hooks (the same as `Hooks::default()`).
    pub fn new() -> Hooks {
        Hooks::default()
    }

    /// A hook that sees each prompt before it is sent and may allow, block or rewrite it (`None`: no opinion, the next hook decides).
    pub fn on_user_prompt_submit<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(UserPromptSubmit) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<PromptDecision>> + Send + 'static,
    {
        self.prompt.push(Arc::new(move |ev| Box::pin(hook(ev))));
        self
    }

    /// A hook that sees each tool call before it runs and may allow, block or rewrite it (`None`: no opinion, the next hook decides).
    pub fn on_pre_tool_use<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(PreToolUse) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<ToolDecision>> + Send + 'static,
    {
        self.pre.push(Arc::new(move |ev| Box::pin(hook(ev))));
        self
    }

    /// A hook that observes each result and may replace it (`Some(outcome)`).
    pub fn on_post_tool_use<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(PostToolUse) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<ToolOutcome>> + Send + 'static,
    {
        self.post.push(Arc::new(move |ev| Box::pin(hook(ev))));
        self
    }

    /// Appends `other`'s hooks after these.
    pub fn merge(mut self, other: Hooks) -> Self {
        self.prompt.extend(other.prompt);
        self.pre.extend(other.pre);
        self.post.extend(other.post);
        self
    }

    /// Whether a `PreToolUse` hook may block or rewrite calls.
    pub(crate) fn gates_tools(&self) -> bool {
        !self.pre.is_empty()
    }

    /// Whether no hook of any kind is registered.
    pub fn is_empty(&self) -> bool {
        self.prompt.is_empty() && self.pre.is_empty() && self.post.is_empty()
    }

    pub(crate) async fn user_prompt_submit(&self, prompt: &str) -> Option<PromptDecision> {
        for hook in &self.prompt {
            let ev = UserPromptSubmit {
                prompt: prompt.to_owned(),
            };
            if let Some(d) = hook(ev).await {
                return Some(d);
            }
        }
        None
    }

    pub(crate) async fn pre_tool_use(&self, ev: PreToolUse) -> Option<ToolDecision> {
        for hook in &self.pre {
            if let Some(d) = hook(ev.clone()).await {
                return Some(d);
            }
        }
        None
    }

    pub(crate) async fn post_tool_use(&self, ev: PostToolUse) -> Option<ToolOutcome> {
        for hook in &self.post {
            if let Some(r) = hook(ev.clone()).await {
                return Some(r);
            }
        }
        None
    }
}

/// What travels from the engine task to the client, in the loop's order:
/// the stream events and the run events of the engine.
#[derive(Debug)]
pub(crate) enum Signal {
    Event(StreamEvent),
    Run(RunEvent),
}

/// The hooks as the engine's policy.
pub(crate) struct HookPolicy {
    hooks: Hooks,
}

impl HookPolicy {
    pub(super) fn new(hooks: Hooks) -> HookPolicy {
        HookPolicy { hooks }
    }
}

#[async_trait::async_trait]
impl Policy for HookPolicy {
    async fn before_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        let ev = PreToolUse {
            call_id: call.call_id.clone(),
            tool_name: call.name.clone(),
            input: arguments_value(&call.arguments),
            turn: ctx.turn,
        };
        match self.hooks.pre_tool_use(ev).await {
            None | Some(ToolDecision::Allow) => CallDecision::Allow,
            Some(ToolDecision::Block { reason }) => CallDecision::Deny { reason },
            Some(ToolDecision::Rewrite(v)) => CallDecision::AllowWithArguments(v.to_string()),
        }
    }

    async fn after_call(
        &self,
        _ctx: &PolicyContext<'_>,
        call: &ToolCall,
        result: EngineToolResult,
    ) -> EngineToolResult {
        if self.hooks.post.is_empty() {
            return result;
        }
        let ev = PostToolUse {
            call_id: call.call_id.clone(),
            tool_name: call.name.clone(),
            input: arguments_value(&call.arguments),
            result: ToolOutcome {
                content: result.output.joined_text(),
                is_error: result.is_error,
            },
        };
        match self.hooks.post_tool_use(ev).await {
            // A hosted call keeps its item (the model reads the text
            // rendered from it) unless the hook made the result an error.
            Some(r) => EngineToolResult {
                output: ToolOutput::Text(r.content),
                item: result.item.filter(|_| !r.is_error),
                is_error: r.is_error,
            },
            None => result,
        }
    }
}

//! Hooks (seed 002): `UserPromptSubmit`, `PreToolUse`, `PostToolUse`.
//!
//! `UserPromptSubmit` runs in the client before a query is prepared. The tool
//! hooks run inside the engine as its [`Policy`], so they gate every call the
//! model makes, whoever executes it: the engine (auto mode) or the caller
//! (manual mode).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;
use windlass_engine::{
    CallDecision, LoopBudget, Policy, PolicyContext, ToolCall, ToolDefinition,
    ToolResult as EngineToolResult, TurnDecision,
};
use windlass_protocol::{StreamEvent, ToolOutput};

use super::tool::{arguments_value, ToolOutcome};

/// Fired once per [`Client::query`](super::Client::query), never on a continuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPromptSubmit {
    pub prompt: String,
}

/// What a `UserPromptSubmit` hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptDecision {
    /// Send the prompt as it is (and skip the remaining hooks).
    Allow,
    /// Refuse the query: `query()` returns [`SdkError::PromptBlocked`](super::SdkError::PromptBlocked).
    Block { reason: String },
    /// Send this prompt instead.
    Rewrite(String),
}

/// Fired before each tool call the model makes, in the order of the calls.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolUse {
    pub call_id: String,
    pub tool_name: String,
    /// The arguments as the model sent them (a JSON string when they do not parse).
    pub input: Value,
    /// Model turns made so far in this run.
    pub turn: u32,
}

/// What a `PreToolUse` hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolDecision {
    /// Run the call (and skip the remaining hooks).
    Allow,
    /// Do not run it: the model gets an error result saying it was blocked
    /// and why, the stream yields a [`Block::ToolUseError`](super::Block::ToolUseError).
    Block { reason: String },
    /// Run it with this input instead of the model's.
    Rewrite(Value),
}

/// Fired after each tool result the model will see (auto mode: after the
/// engine ran the tool; manual mode: in `add_tool_result`).
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolUse {
    pub call_id: String,
    pub tool_name: String,
    /// The input the tool ran with.
    pub input: Value,
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
    pub fn new() -> Hooks {
        Hooks::default()
    }

    pub fn on_user_prompt_submit<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(UserPromptSubmit) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<PromptDecision>> + Send + 'static,
    {
        self.prompt.push(Arc::new(move |ev| Box::pin(hook(ev))));
        self
    }

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

/// What travels from the engine task to the client, in order: the engine's
/// stream events, and the SDK policy's notes (both are produced on the
/// engine's task, so their order is the loop's order).
#[derive(Debug)]
pub(crate) enum Signal {
    Event(StreamEvent),
    /// A model turn is about to start.
    TurnStarted,
    /// The `PreToolUse` verdict on a call (after its model turn ended).
    Decided {
        call_id: String,
        decision: Verdict,
    },
}

/// A `PreToolUse` verdict as the client keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    Allow,
    Block(String),
    Rewrite(Value),
}

/// The hooks as the engine's policy, linked to the client's current run.
pub(crate) struct HookPolicy {
    hooks: Hooks,
    link: Mutex<RunLink>,
}

#[derive(Default)]
struct RunLink {
    tx: Option<mpsc::Sender<Signal>>,
    /// Verdicts of calls still open from the previous run: a continuation
    /// re-classifies them, and their hooks must not fire twice.
    replay: HashMap<String, CallDecision>,
    /// Verdicts given in this run.
    decided: HashMap<String, CallDecision>,
}

impl HookPolicy {
    pub fn new(hooks: Hooks) -> HookPolicy {
        HookPolicy {
            hooks,
            link: Mutex::new(RunLink::default()),
        }
    }

    fn link(&self) -> MutexGuard<'_, RunLink> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connects the policy to a starting run.
    pub fn begin_run(&self, tx: mpsc::Sender<Signal>, replay: HashMap<String, CallDecision>) {
        let mut link = self.link();
        link.tx = Some(tx);
        link.replay = replay;
        link.decided.clear();
    }

    /// Disconnects the run; returns the verdicts it gave.
    pub fn end_run(&self) -> HashMap<String, CallDecision> {
        let mut link = self.link();
        link.tx = None;
        link.replay.clear();
        std::mem::take(&mut link.decided)
    }

    async fn signal(&self, signal: Signal) {
        let tx = self.link().tx.clone();
        if let Some(tx) = tx {
            let _ = tx.send(signal).await;
        }
    }
}

fn verdict_of(d: &CallDecision) -> Verdict {
    match d {
        CallDecision::Deny { reason } => Verdict::Block(reason.clone()),
        CallDecision::AllowWithArguments(a) => Verdict::Rewrite(arguments_value(a)),
        _ => Verdict::Allow,
    }
}

#[async_trait::async_trait]
impl Policy for HookPolicy {
    async fn before_turn(&self, _ctx: &PolicyContext<'_>, _budget: &LoopBudget) -> TurnDecision {
        // Re-classification of the parent's open calls happens before the
        // first turn; past it, ids are fresh.
        self.link().replay.clear();
        self.signal(Signal::TurnStarted).await;
        TurnDecision::Continue
    }

    async fn before_call(
        &self,
        ctx: &PolicyContext<'_>,
        call: &ToolCall,
        _tool: Option<&ToolDefinition>,
    ) -> CallDecision {
        let replayed = self.link().replay.remove(&call.call_id);
        let decision = match replayed {
            Some(d) => d,
            None => {
                let ev = PreToolUse {
                    call_id: call.call_id.clone(),
                    tool_name: call.name.clone(),
                    input: arguments_value(&call.arguments),
                    turn: ctx.turn,
                };
                match self.hooks.pre_tool_use(ev).await {
                    None | Some(ToolDecision::Allow) => CallDecision::Allow,
                    Some(ToolDecision::Block { reason }) => CallDecision::Deny { reason },
                    Some(ToolDecision::Rewrite(v)) => {
                        CallDecision::AllowWithArguments(v.to_string())
                    }
                }
            }
        };
        self.link()
            .decided
            .insert(call.call_id.clone(), decision.clone());
        self.signal(Signal::Decided {
            call_id: call.call_id.clone(),
            decision: verdict_of(&decision),
        })
        .await;
        decision
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
                content: output_text(&result.output),
                is_error: result.is_error,
            },
        };
        match self.hooks.post_tool_use(ev).await {
            Some(r) => EngineToolResult {
                output: ToolOutput::Text(r.content),
                is_error: r.is_error,
            },
            None => result,
        }
    }
}

/// A tool output as text.
pub(crate) fn output_text(o: &ToolOutput) -> String {
    match o {
        ToolOutput::Text(t) => t.clone(),
        ToolOutput::Parts(parts) => parts.iter().filter_map(|p| p.text()).collect(),
    }
}

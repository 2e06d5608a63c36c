//! [`Client`]: one conversation with an agent, on the engine's loop.
//!
//! The client has no loop of its own. A query or a continuation is one
//! engine run (`Engine::prepare` + `Engine::run`) on a spawned task; the
//! client turns the run's stream events into [`Block`]s and keeps the
//! history. Auto mode is the engine executing the agent's tools; manual mode
//! is the engine stopping at the model's calls (`requires_action`) and the
//! next run carrying the caller's results (`previous_response_id` +
//! `function_call_output` items).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    Engine, EngineConfig, EventSink, Policy, PolicyChain, ResponseStore, RunContext, RunEvent,
    SinkClosed, Trace,
};
use windlass_protocol::{
    CreateResponseRequest, FunctionCallOutput, Input, Item, ItemStatus, ResponseResource,
    StreamEvent, ToolOutput,
};
#[cfg(feature = "mcp")]
use windlass_protocol::{McpApprovalMode, McpRequireApproval, McpTool};
use windlass_store::MemoryStore;

use super::agent::Agent;
use super::block::{Block, Message, ToolUse};
use super::convert::{Converter, RunResult, State};
use super::error::SdkError;
use super::hooks::{HookPolicy, PostToolUse, PromptDecision, Signal};
use super::tool::{LocalTools, ToolOutcome};

/// Events buffered between the engine task and the reader.
const SIGNAL_BUFFER: usize = 256;

/// One conversation with an [`Agent`]. Every method takes `&self`, so a
/// client can be shared (e.g. in an `Arc`) and interrupted from another task
/// while a stream is being read.
///
/// The conversation lives in an in-memory response store: each run is
/// stored and the next one continues from it with `previous_response_id`,
/// exactly as over HTTP. Use [`Client::with_store`] for another store.
pub struct Client {
    agent: Agent,
    engine: Engine,
    state: Mutex<State>,
    active: tokio::sync::Mutex<Option<ActiveRun>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state();
        f.debug_struct("Client")
            .field("agent", &self.agent)
            .field("last_response_id", &st.last_response_id)
            .field("history", &st.history.len())
            .field("pending", &st.pending.len())
            .finish_non_exhaustive()
    }
}

struct ActiveRun {
    rx: mpsc::Receiver<Signal>,
    task: Option<JoinHandle<RunResult>>,
    conv: Converter,
    queue: VecDeque<Block>,
    finished: bool,
}

impl Client {
    /// A new conversation, kept in memory.
    pub fn new(agent: Agent) -> Client {
        Client::with_store(agent, Arc::new(MemoryStore::new()))
    }

    /// A new conversation kept in `store` (e.g. a `windlass_store::SqliteStore`).
    pub fn with_store(agent: Agent, store: Arc<dyn ResponseStore>) -> Client {
        let a = &agent.inner;
        let policy = Arc::new(HookPolicy::new(a.hooks.clone()));
        let mut config = EngineConfig {
            // One model turn per iteration; each may run a round of tools.
            max_agentic_turns: a.max_tool_iterations,
            max_tool_calls_per_turn: a.max_tool_calls_per_turn,
            tool_error_threshold: a.tool_error_threshold,
            completion_check: a.completion_check,
            techniques: a.techniques,
            ..EngineConfig::default()
        };
        if let Some(t) = a.tool_timeout {
            config.tool_timeout = t;
        }
        // The agent's own gate first, then the hooks.
        let gate: Arc<dyn Policy> = match &a.policy {
            Some(p) => Arc::new(PolicyChain(vec![p.clone(), policy.clone()])),
            None => policy.clone(),
        };
        let mut builder = Engine::builder(a.provider.clone(), store)
            .policy(gate)
            .config(config);
        #[cfg(feature = "mcp")]
        if let Some((_, hub)) = &a.mcp {
            builder = builder.mcp(hub.clone());
        }
        // Manual mode registers no executor: the agent's tools are the
        // client's, and the run pauses at their calls.
        if a.auto_execute_tools {
            builder = builder.executor(Arc::new(LocalTools(a.registry.clone())));
        }
        Client {
            engine: builder.build(),
            agent,
            state: Mutex::new(State::default()),
            active: tokio::sync::Mutex::new(None),
        }
    }

    /// The agent this conversation runs with.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a user prompt and starts the run; read it with [`receive`](Self::receive).
    ///
    /// `UserPromptSubmit` hooks run first (once per query; continuations never
    /// fire them) and may block or rewrite the prompt. A previous run that
    /// was not read to its end is finished first (its unread blocks are
    /// dropped; the history keeps everything). Results added with
    /// [`add_tool_result`](Self::add_tool_result) go along with the prompt.
    pub async fn query(&self, prompt: impl Into<String>) -> Result<(), SdkError> {
        let mut active = self.active.lock().await;
        self.settle(&mut active).await;
        self.check_answered()?;
        let mut prompt = prompt.into();
        match self.agent.inner.hooks.user_prompt_submit(&prompt).await {
            Some(PromptDecision::Block { reason }) => {
                return Err(SdkError::PromptBlocked { reason })
            }
            Some(PromptDecision::Rewrite(p)) => prompt = p,
            Some(PromptDecision::Allow) | None => {}
        }
        let mut input = self.state().results.clone();
        let sent_results = input.len();
        input.push(Item::user_text(prompt.clone()));
        self.start(&mut active, input, sent_results).await?;
        self.state().history.push(Message::User { content: prompt });
        Ok(())
    }

    /// Continues the conversation without a new user message: the results
    /// added with [`add_tool_result`](Self::add_tool_result) go to the model
    /// (manual mode). No `UserPromptSubmit` hook fires. Also resumes after
    /// `MaxIterations` or an interrupt.
    pub async fn continue_turn(&self) -> Result<(), SdkError> {
        let mut active = self.active.lock().await;
        self.settle(&mut active).await;
        if self.state().last_response_id.is_none() {
            return Err(SdkError::NothingToContinue);
        }
        self.check_answered()?;
        let input = self.state().results.clone();
        let n = input.len();
        self.start(&mut active, input, n).await
    }

    /// The current run's blocks, in order, ending with [`Block::Done`]. Text
    /// arrives as it streams. Empty when no run was started, or once the
    /// run's `Done` was read.
    pub fn receive(&self) -> BlockStream<'_> {
        BlockStream {
            inner: Box::pin(futures::stream::unfold(self, |client| async move {
                let block = client.next_block().await?;
                Some((block, client))
            })),
        }
    }

    /// Manual mode: the result of a [`ToolUse`] the caller ran. Goes to the
    /// model with the next [`continue_turn`](Self::continue_turn) (or
    /// `query`). `PostToolUse` hooks run here and may replace it.
    pub async fn add_tool_result(
        &self,
        call_id: &str,
        result: impl Into<ToolOutcome>,
    ) -> Result<(), SdkError> {
        let call = {
            let mut st = self.state();
            let i = st
                .pending
                .iter()
                .position(|c| c.id == call_id)
                .ok_or_else(|| SdkError::UnknownToolCall(call_id.to_owned()))?;
            st.pending.remove(i)
        };
        let mut result = result.into();
        let ev = PostToolUse {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input: call.input.clone(),
            result: result.clone(),
        };
        if let Some(replaced) = self.agent.inner.hooks.post_tool_use(ev).await {
            result = replaced;
        }
        let mut st = self.state();
        st.results
            .push(Item::FunctionCallOutput(FunctionCallOutput {
                id: None,
                call_id: call.id.clone(),
                output: ToolOutput::Text(result.content.clone()),
                status: Some(ItemStatus::Completed),
                is_error: result.is_error.then_some(true),
            }));
        st.history.push(Message::ToolResult {
            call_id: call.id,
            name: call.name,
            content: result.content,
            is_error: result.is_error,
        });
        Ok(())
    }

    /// Manual mode helper: runs a call on the agent's registered tool (an
    /// unknown tool is an error outcome). Pass the outcome to `add_tool_result`.
    pub async fn run_tool(&self, call: &ToolUse) -> ToolOutcome {
        match self.agent.tool(&call.name) {
            Some(tool) => tool.call(&call.input).await,
            None => ToolOutcome::error(format!("Unknown tool: {}", call.name)),
        }
    }

    /// Stops the current run: the upstream call and running tools are
    /// cancelled and the run ends with [`Termination::Interrupted`]. What
    /// was produced so far stays in the history.
    pub fn interrupt(&self) {
        if let Some(c) = &self.state().cancel {
            c.cancel();
        }
    }

    /// The conversation so far: user prompts, assistant turns with their
    /// tool calls (the model's arguments), and tool results.
    pub fn history(&self) -> Vec<Message> {
        self.state().history.clone()
    }

    /// Manual mode: calls seen that still wait for a result.
    pub fn pending_tool_calls(&self) -> Vec<ToolUse> {
        self.state().pending.clone()
    }

    /// The last finished run's response object (as the HTTP API returns it).
    pub fn last_response(&self) -> Option<ResponseResource> {
        self.state().last_response.clone()
    }

    /// The execution trace of the last finished run: a step per model turn
    /// and an action per tool call (arguments with secrets redacted).
    pub fn last_trace(&self) -> Option<Trace> {
        self.state().last_trace.clone()
    }

    /// The id the next query or continuation continues from.
    pub fn last_response_id(&self) -> Option<String> {
        self.state().last_response_id.clone()
    }

    fn check_answered(&self) -> Result<(), SdkError> {
        let st = self.state();
        if st.pending.is_empty() {
            Ok(())
        } else {
            Err(SdkError::UnansweredToolCalls(
                st.pending.iter().map(|c| c.id.clone()).collect(),
            ))
        }
    }

    fn request(&self, input: Vec<Item>, previous: Option<String>) -> CreateResponseRequest {
        let a = &self.agent.inner;
        #[cfg_attr(not(feature = "mcp"), allow(unused_mut))]
        let mut tools: Vec<_> = a
            .registry
            .tools()
            .iter()
            .map(|t| t.function_tool())
            .collect();
        #[cfg(feature = "mcp")]
        for label in a.mcp.iter().flat_map(|(labels, _)| labels) {
            tools.push(windlass_protocol::Tool::Mcp(McpTool {
                server_label: label.clone(),
                server_url: None,
                connector_id: None,
                server_description: None,
                headers: None,
                authorization: None,
                allowed_tools: None,
                // The SDK gates calls with hooks, not approval items.
                require_approval: Some(McpRequireApproval::Mode(McpApprovalMode::Never)),
            }));
        }
        CreateResponseRequest {
            model: Some(a.model.clone()),
            input: Some(Input::Items(input)),
            previous_response_id: previous,
            instructions: a.system_prompt.clone(),
            tools: (!tools.is_empty()).then_some(tools),
            temperature: a.temperature,
            max_output_tokens: a.max_output_tokens,
            parallel_tool_calls: a.parallel_tool_calls,
            stream: Some(true),
            store: Some(true),
            ..CreateResponseRequest::default()
        }
    }

    /// Prepares and spawns one engine run. `sent_results` queued results are
    /// part of `input` and leave the queue once the engine accepted them.
    async fn start(
        &self,
        active: &mut Option<ActiveRun>,
        input: Vec<Item>,
        sent_results: usize,
    ) -> Result<(), SdkError> {
        let previous = self.state().last_response_id.clone();
        let request = self.request(input, previous);
        let prepared = self.engine.prepare(RunContext::default(), request).await?;
        let (tx, rx) = mpsc::channel(SIGNAL_BUFFER);
        let cancel = CancellationToken::new();
        {
            let mut st = self.state();
            let n = sent_results.min(st.results.len());
            st.results.drain(..n);
            st.cancel = Some(cancel.clone());
        }
        let engine = self.engine.clone();
        let task = tokio::spawn(async move {
            let mut sink = SignalSink(tx);
            engine.run(prepared, &mut sink, cancel).await
        });
        let a = &self.agent.inner;
        *active = Some(ActiveRun {
            rx,
            task: Some(task),
            conv: Converter::new(
                a.auto_execute_tools,
                a.hooks.gates_tools(),
                a.max_tool_iterations,
            ),
            queue: VecDeque::new(),
            finished: false,
        });
        Ok(())
    }

    async fn next_block(&self) -> Option<Block> {
        let mut guard = self.active.lock().await;
        let run = guard.as_mut()?;
        loop {
            if let Some(b) = run.queue.pop_front() {
                return Some(b);
            }
            if run.finished {
                return None;
            }
            self.step(run).await;
        }
    }

    /// Processes the next signal of a run, or finishes it.
    async fn step(&self, run: &mut ActiveRun) {
        match run.rx.recv().await {
            Some(signal) => {
                let mut st = self.state();
                run.conv.on_signal(signal, &mut st, &mut run.queue);
            }
            None => {
                let result = match run.task.as_mut() {
                    Some(task) => task.await.map_err(|e| e.to_string()),
                    None => Err("the run was already finished".to_owned()),
                };
                run.task = None;
                let mut st = self.state();
                run.conv.finish(result, &mut st, &mut run.queue);
                run.finished = true;
            }
        }
    }

    /// Lets the current run end (unread blocks are dropped) so the next one
    /// can start from its stored response.
    async fn settle(&self, active: &mut Option<ActiveRun>) {
        if let Some(run) = active.as_mut() {
            while !run.finished {
                self.step(run).await;
            }
        }
        *active = None;
    }
}

impl Drop for Client {
    /// A run still going is cancelled: nobody can read it any more.
    fn drop(&mut self) {
        if let Some(c) = &self.state().cancel {
            c.cancel();
        }
    }
}

/// The blocks of the current run ([`Client::receive`]): a `Stream` (and
/// `Unpin`, so `while let Some(b) = stream.next().await` just works).
pub struct BlockStream<'a> {
    inner: Pin<Box<dyn Stream<Item = Block> + Send + 'a>>,
}

impl Stream for BlockStream<'_> {
    type Item = Block;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Block>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for BlockStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockStream")
    }
}

/// The engine's events into the client's signal channel.
struct SignalSink(mpsc::Sender<Signal>);

#[async_trait::async_trait]
impl EventSink for SignalSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        self.0
            .send(Signal::Event(event))
            .await
            .map_err(|_| SinkClosed)
    }

    fn wants_run_events(&self) -> bool {
        true
    }

    async fn run_event(&mut self, event: RunEvent) {
        // A closed channel is reported by the next `send`.
        let _ = self.0.send(Signal::Run(event)).await;
    }
}

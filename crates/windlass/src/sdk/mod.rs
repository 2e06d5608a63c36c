//! The embedded agent SDK: an [`Agent`] with typed local
//! [`Tool`]s and [`Hooks`], a [`Client`] holding one conversation, and a
//! single-shot [`query`].
//!
//! There is no second agent loop here. Each query (or continuation) is one
//! run of the same engine driver the HTTP server uses: the SDK builds a
//! `CreateResponseRequest`, calls `Engine::prepare` and `Engine::run`, and
//! turns the engine's stream events into [`Block`]s. Conversations chain
//! with `previous_response_id` in an in-memory response store.
//!
//! | SDK setting or event | what the engine does |
//! |---|---|
//! | `auto_execute_tools=True` | the agent's tools are an engine executor; the engine runs them (a turn's calls concurrently) and feeds results back |
//! | `auto_execute_tools=False` (default) | the tools are client functions: the run ends at the model's calls ([`Termination::AwaitingToolResults`]); [`Client::add_tool_result`] + [`Client::continue_turn`] |
//! | `max_tool_iterations` (default 5) | the engine's turn limit: at most that many model turns per run, each may run a round of tools; hitting it ends the run with [`Termination::MaxIterations`] |
//! | `PreToolUse` / `PostToolUse` | the engine's `Policy`: consulted before and after every call, in both modes |
//! | `UserPromptSubmit` | runs in [`Client::query`] before the request is prepared; never on a continuation |
//! | unknown tool, tool exception | yielded as [`Block::ToolUseError`] and fed back to the model as an error result; the loop goes on |
//!
//! # Auto mode
//!
//! ```no_run
//! use futures::StreamExt;
//! use serde::Deserialize;
//! use windlass::sdk::{Agent, Block, Client, Termination, Tool, ToolError};
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct Pair {
//!     a: f64,
//!     b: f64,
//! }
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder()
//!     .model("qwen2.5-1.5b")
//!     .base_url("http://127.0.0.1:8081/v1")
//!     .system_prompt("You are a calculator. Use the tools.")
//!     .tool(Tool::new("add", "Add two numbers", |p: Pair| async move {
//!         Ok::<_, ToolError>(p.a + p.b)
//!     }))
//!     .tool(Tool::new("divide", "Divide a by b", |p: Pair| async move {
//!         if p.b == 0.0 {
//!             return Err(ToolError::new("Cannot divide by zero"));
//!         }
//!         Ok(p.a / p.b)
//!     }))
//!     .auto_execute_tools(true)
//!     .max_tool_iterations(5)
//!     .build()?;
//!
//! let client = Client::new(agent);
//! client.query("What is 25 + 17?").await?;
//! let mut blocks = client.receive();
//! while let Some(block) = blocks.next().await {
//!     match block {
//!         Block::Text(t) => print!("{t}"),
//!         Block::ToolUse(call) => println!("[tool] {} {}", call.name, call.input),
//!         Block::ToolResult { content, .. } => println!("[result] {content}"),
//!         Block::ToolUseError { error, .. } => println!("[error] {error}"),
//!         Block::Done { termination, usage, .. } => {
//!             if termination != Termination::Completed {
//!                 println!("stopped: {termination:?}");
//!             }
//!             println!("{} tokens", usage.total_tokens);
//!         }
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Manual mode
//!
//! The run stops at the model's tool calls; the caller runs them and
//! continues without a new user message:
//!
//! ```no_run
//! use futures::StreamExt;
//! use windlass::sdk::{Agent, Block, Client, Termination};
//!
//! # async fn demo(agent: Agent) -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(agent); // auto_execute_tools(false), the default
//! client.query("What is 25 + 17?").await?;
//! loop {
//!     let mut done = None;
//!     let mut blocks = client.receive();
//!     while let Some(block) = blocks.next().await {
//!         match block {
//!             Block::Text(t) => print!("{t}"),
//!             Block::Done { termination, .. } => done = Some(termination),
//!             _ => {}
//!         }
//!     }
//!     drop(blocks);
//!     if done != Some(Termination::AwaitingToolResults) {
//!         break;
//!     }
//!     for call in client.pending_tool_calls() {
//!         let outcome = client.run_tool(&call).await; // or run it any way you like
//!         client.add_tool_result(&call.id, outcome).await?;
//!     }
//!     client.continue_turn().await?;
//! }
//! println!("{:#?}", client.history());
//! # Ok(())
//! # }
//! ```
//!
//! # Hooks
//!
//! ```
//! use windlass::sdk::{Agent, Hooks, PromptDecision, ToolDecision, ToolOutcome};
//!
//! let hooks = Hooks::new()
//!     .on_user_prompt_submit(|ev| async move {
//!         ev.prompt
//!             .contains("password")
//!             .then(|| PromptDecision::Block { reason: "no secrets".into() })
//!     })
//!     .on_pre_tool_use(|ev| async move {
//!         match ev.tool_name.as_str() {
//!             "delete_file" => Some(ToolDecision::Block { reason: "read-only session".into() }),
//!             _ => None, // no opinion: the next hook decides, or the call runs
//!         }
//!     })
//!     .on_post_tool_use(|ev| async move {
//!         // Observe every result; return Some(..) to replace it.
//!         (ev.result.content.len() > 10_000).then(|| ToolOutcome::ok("(output too long)"))
//!     });
//! let agent = Agent::builder()
//!     .model("m")
//!     .base_url("http://127.0.0.1:8081/v1")
//!     .hooks(hooks)
//!     .build()
//!     .unwrap();
//! assert_eq!(agent.max_tool_iterations(), 5);
//! assert!(!agent.auto_execute_tools());
//! ```

mod agent;
mod block;
mod client;
mod convert;
mod error;
mod hooks;
mod prompt;
mod query;
mod tool;

pub use agent::{Agent, AgentBuilder, DEFAULT_MAX_TOOL_ITERATIONS};
pub use block::{Block, Message, Termination, ToolErrorKind, ToolUse};
pub use client::{BlockStream, Client};
pub use error::{BuildError, SdkError};
pub use hooks::{Hooks, PostToolUse, PreToolUse, PromptDecision, ToolDecision, UserPromptSubmit};
pub use prompt::PromptResult;
pub use query::{query, QueryResult};
pub use tool::{Tool, ToolError, ToolOutcome};
pub use windlass_engine::{StopReason, Trace, TraceAction, TraceStep};
pub use windlass_protocol::Usage;
#[cfg(feature = "mcp")]
pub use windlass_tools::{McpConfig, McpServerConfig};

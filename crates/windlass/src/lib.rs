//! Windlass: an OpenResponses gateway and embeddable agent engine.
//!
//! Layer: the facade; it may depend on every library crate, never on `windlass-cli`.
//!
//! The binary `windlass serve` (the `windlass-cli` crate) puts the
//! Responses API in front of any OpenAI-compatible model server. The same
//! engine is available in-process through the SDK in [`sdk`] (re-exported
//! here): an [`Agent`] with typed [`Tool`]s and [`Hooks`], a [`Client`] for
//! a conversation, and a single-shot [`query()`]. The SDK has no loop of its own: each query is
//! one run of the engine driver the server uses.
//!
//! ```no_run
//! use futures::StreamExt;
//! use serde::Deserialize;
//! use windlass::{Agent, Block, Client, Tool, ToolError};
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     a: f64,
//!     b: f64,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let agent = Agent::builder()
//!         .model("qwen2.5-1.5b")
//!         .base_url("http://127.0.0.1:8081/v1")
//!         .tool(Tool::new("add", "Add two numbers", |args: AddArgs| async move {
//!             Ok::<_, ToolError>(args.a + args.b)
//!         }))
//!         .auto_execute_tools(true)
//!         .build()?;
//!     let client = Client::new(agent);
//!     client.query("What's 25 + 17?").await?;
//!     let mut blocks = client.receive();
//!     while let Some(block) = blocks.next().await {
//!         match block {
//!             Block::Text(t) => print!("{t}"),
//!             Block::ToolUse(call) => println!("[tool] {} {}", call.name, call.input),
//!             Block::Done { termination, .. } => println!("\n({termination:?})"),
//!             _ => {}
//!         }
//!     }
//!     Ok(())
//! }
//! ```
//!
//! Tools can be tested without a model: a typed tool decodes its arguments
//! before the handler runs, and a bad argument is an error result, not a panic.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use serde::Deserialize;
//! use windlass::{Tool, ToolError};
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct Div {
//!     a: f64,
//!     b: f64,
//! }
//!
//! let divide = Tool::new("divide", "Divide a by b", |d: Div| async move {
//!     if d.b == 0.0 {
//!         return Err(ToolError::new("Cannot divide by zero"));
//!     }
//!     Ok(d.a / d.b)
//! });
//! assert_eq!(divide.call(&serde_json::json!({"a": 9, "b": 3})).await.content, "3.0");
//! assert!(divide.call(&serde_json::json!({"a": 1, "b": 0})).await.is_error);
//! assert!(divide.call(&serde_json::json!({"a": "x"})).await.is_error);
//! # }
//! ```

// A public crate: every public item says what it is and why it exists.
#![warn(missing_docs)]

//! # Cargo features
//!
//! All on by default. An embedder of the SDK can take
//! `default-features = false` and add back only what it needs:
//!
//! - `mcp`: MCP servers as tool sources ([`AgentBuilder::mcp_server`]).
//! - `sqlite`: the SQLite response store (`windlass_store::SqliteStore`).
//! - `server`: the HTTP surfaces (axum), re-exported as `windlass::server`.
//! - `postgres`: the Postgres response store (`windlass_store::PgStore`).

pub mod sdk;

pub use sdk::{
    query, Agent, AgentBuilder, Block, BlockStream, BuildError, Client, Hooks, Message,
    PostToolUse, PreToolUse, PromptDecision, PromptResult, QueryResult, SdkError, Termination,
    Tool, ToolDecision, ToolError, ToolErrorKind, ToolOutcome, ToolUse, Usage, UserPromptSubmit,
};

/// The schema derive used by typed tools' argument types.
pub use schemars;
pub use windlass_engine as engine;
/// The loop's task-success techniques an agent can switch on.
pub use windlass_engine::Techniques;
pub use windlass_protocol as protocol;
#[cfg(feature = "server")]
pub use windlass_server as server;
pub use windlass_store as store;

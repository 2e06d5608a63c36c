//! The Windlass engine: one agent loop for every surface, and its ports.
//!
//! A surface builds a [`CreateResponseRequest`](windlass_protocol::CreateResponseRequest),
//! calls [`Engine::prepare`] (all validation; nothing written on refusal) and
//! then [`Engine::run`] with an [`EventSink`]. Streaming and non-streaming
//! differ only in the sink.

mod classify;
pub mod client_shapes;
pub mod compaction;
pub mod config;
mod deadline;
mod driver;
mod emitter;
mod engine;
pub mod error;
mod execute;
mod finish;
mod mcp;
pub mod outcome;
pub mod ports;
mod prepare;
pub mod state;
pub mod tooling;
pub mod trace;
mod turn;
pub mod upstream;

pub use compaction::{CompactError, COMPACTION_PROMPT};
pub use config::*;
pub use engine::{Engine, EngineBuilder};
pub use error::*;
pub use outcome::*;
pub use ports::cancel::*;
pub use ports::conversations::*;
pub use ports::events::*;
pub use ports::mcp::*;
pub use ports::policy::*;
pub use ports::prompts::*;
pub use ports::propagation::{
    adopt_trace_parent, set_trace_propagation, trace_headers, TracePropagation,
};
pub use ports::provider::*;
pub use ports::quota::*;
pub use ports::runs::*;
pub use ports::sink::*;
pub use ports::store::*;
pub use ports::tools::*;
pub use prepare::{
    valid_name, with_id, PreparedRun, META_MAX_TOOL_CALLS_PER_TURN, META_MAX_TURNS,
    META_TOOL_ERROR_THRESHOLD,
};
pub use tooling::{mcp_tool_name, ToolOwner};
pub use trace::{Trace, TraceAction, TraceStep};

//! The Windlass engine: one agent loop for every surface, and its ports.
//!
//! Layer: depends only on `windlass-protocol`; it knows nothing of HTTP, SQL or
//! the MCP wire: adapters implement its ports in their own crates.
//!
//! A surface builds a [`CreateResponseRequest`](windlass_protocol::CreateResponseRequest)
//! and a [`RunContext`] (tenant, caller, what it kept itself), calls
//! [`Engine::prepare`] (all validation; nothing written on refusal) and then
//! [`Engine::run`] with an [`EventSink`]. Streaming and non-streaming differ
//! only in the sink.

// A public crate: every public item says what it is and why it exists.
#![warn(missing_docs)]

mod check;
mod classify;
pub mod client_shapes;
mod clock;
pub mod compaction;
pub mod config;
mod context_fit;
mod count;
mod deadline;
mod driver;
mod emitter;
mod engine;
pub mod error;
mod execute;
mod finish;
mod hosted;
mod mcp;
pub mod naming;
pub mod outcome;
pub mod ports;
mod prepare;
mod prepared;
mod run_context;
mod spans;
mod stall;
pub mod state;
pub mod techniques;
pub mod tooling;
pub mod trace;
mod turn;
pub mod upstream;
mod values;
mod warmup;

pub use compaction::{CompactError, COMPACTION_PROMPT};
pub use config::*;
pub use count::CountError;
pub use engine::{Engine, EngineBuilder};
pub use error::*;
pub use hosted::definition as hosted_definition;
pub use naming::{mcp_tool_name, valid_name};
pub use outcome::*;
pub use ports::agent::conversations::*;
pub use ports::agent::events::*;
pub use ports::agent::mcp::*;
pub use ports::agent::policy::*;
pub use ports::agent::provider::*;
pub use ports::agent::sink::*;
pub use ports::agent::store::*;
pub use ports::agent::tools::*;
pub use ports::agent::trace::{Trace, TraceAction, TraceCheck, TraceStep};
pub use ports::host::cancel::*;
pub use ports::host::counters::*;
pub use ports::host::propagation::{
    adopt_trace_parent, set_trace_propagation, trace_headers, TracePropagation,
};
pub use ports::host::quota::*;
pub use ports::host::retention::*;
pub use ports::host::runs::*;
pub use ports::resources::containers::*;
pub use ports::resources::embeddings::*;
pub use ports::resources::files::*;
pub use ports::resources::prompts::*;
pub use ports::resources::vector_stores::*;
pub use prepare::{
    with_id, META_MAX_TOOL_CALLS_PER_TURN, META_MAX_TURNS, META_TOOL_ERROR_THRESHOLD,
};
pub use prepared::PreparedRun;
pub use run_context::RunContext;
pub use techniques::{Techniques, UnknownTechnique, META_TECHNIQUES};

//! The Windlass engine: one agent loop for every surface, and its ports.
//!
//! A surface builds a [`CreateResponseRequest`](windlass_protocol::CreateResponseRequest),
//! calls [`Engine::prepare`] (all validation; nothing written on refusal) and
//! then [`Engine::run`] with an [`EventSink`]. Streaming and non-streaming
//! differ only in the sink.

mod client_functions;
pub mod client_shapes;
pub mod config;
mod driver;
mod emitter;
mod engine;
pub mod error;
mod execute;
mod finish;
mod mcp;
pub mod ports;
mod prepare;
pub mod state;
pub mod tooling;
mod turn;
mod turn_calls;
pub mod upstream;

pub use client_functions::ClientFunctions;
pub use config::*;
pub use driver::RunOutcome;
pub use engine::{Engine, EngineBuilder};
pub use error::*;
pub use ports::mcp::*;
pub use ports::policy::*;
pub use ports::provider::*;
pub use ports::sink::*;
pub use ports::store::*;
pub use ports::tools::*;
pub use prepare::{valid_name, with_id, PreparedRun};

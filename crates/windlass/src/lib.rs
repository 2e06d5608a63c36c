//! Windlass: an OpenResponses gateway and embeddable agent engine.
//!
//! The binary `windlass serve` puts the Responses API in front of any
//! OpenAI-compatible model server. The same engine is available in-process.

pub mod cli;
pub mod config;
pub mod serve;

pub use windlass_engine as engine;
pub use windlass_protocol as protocol;

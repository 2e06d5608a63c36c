//! The engine's ports, grouped by who calls them. Adapters implement them
//! in their own crates (`windlass-providers`, `windlass-store`,
//! `windlass-tools`, `windlass-governance`, the server, the SDK).
//!
//! - [`agent`]: what the agent loop itself calls while it prepares and runs
//!   a response (the model, tools, MCP, policy, the store, the event sink).
//! - [`host`]: what the programs around the loop call (the server, the SDK,
//!   adapters); the loop never does. They live in the engine so the store
//!   and the server can share them without depending on each other.

pub mod agent;
pub mod host;
pub mod resources;

// The paths the ports had before they were grouped, so `ports::store::X`
// (and a new port file written against it) keeps working.
pub use agent::{conversations, events, mcp, policy, provider, sink, store, tools, trace};
pub use host::{cancel, counters, propagation, quota, retention, runs};
pub use resources::{containers, embeddings, files, prompts, vector_stores};

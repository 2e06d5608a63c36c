//! The ports the agent loop calls: during `Engine::prepare` (history, tool
//! listings) and `Engine::run` (model turns, tool calls, policy, events, the
//! final save).

pub mod conversations;
pub mod events;
pub mod mcp;
pub mod policy;
pub mod provider;
pub mod sink;
pub mod store;
pub mod tools;
pub mod trace;

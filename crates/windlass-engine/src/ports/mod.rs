//! The engine's ports. Adapters implement them in their own crates.

pub mod cancel;
pub mod conversations;
pub mod events;
pub mod mcp;
pub mod policy;
pub mod prompts;
pub mod propagation;
pub mod provider;
pub mod quota;
pub mod runs;
pub mod sink;
pub mod store;
pub mod tools;

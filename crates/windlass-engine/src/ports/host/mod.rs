//! The ports the programs around the loop call (the server's routes and
//! background worker, the SDK, the model and MCP clients); `Engine::run`
//! never calls them.

pub mod cancel;
pub mod counters;
pub mod propagation;
pub mod quota;
pub mod retention;
pub mod runs;

//! The in-process SDK (`windlass::sdk`) against the scripted upstream. Runs
//! without default features too (scripts/check-packaging.sh), MCP aside.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod auto;
mod governance;
mod hooks;
mod manual;
#[cfg(feature = "mcp")]
mod mcp;
mod prompt;
mod support;
mod tools;

//! MCP tools through the gateway against real MCP servers (the Python
//! fixture server, `scripts/mcp-fixtures.sh`): one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod approvals;
mod chain;
mod configured;
mod errors;
mod filters;
mod http;
mod lifecycle;
mod limits;
mod list_changed;
mod policy_approval;
mod secrets;
mod support;

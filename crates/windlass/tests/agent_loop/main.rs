//! The agentic loop (seed 000) through the gateway: every scenario as JSON
//! and as SSE (`windlass_testkit::scenario`). One test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod allowed_tools;
mod client_tools;
mod client_tools_status;
mod governed;
mod limits;
mod openai_tool_types;
mod policy_once;
mod server_tools;
mod single_shot;

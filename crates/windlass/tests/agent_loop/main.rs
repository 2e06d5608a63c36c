//! The agentic loop (seed 000) through the gateway: every scenario as JSON
//! and as SSE (`windlass_testkit::scenario`). One test binary.

mod allowed_tools;
mod client_tools;
mod client_tools_status;
mod governed;
mod limits;
mod openai_tool_types;
mod policy_once;
mod server_tools;
mod single_shot;

//! OpenAI's tools that Windlass runs itself: `web_search` over an operator's
//! search backend, `code_interpreter` (Python in the sandbox, one work
//! directory per container, the container's files in the store), and, by
//! operator choice, `shell` and `apply_patch` on the server side.
//!
//! Each executor turns a call of its model-facing function into OpenAI's
//! item for it, complete (what the model saw included), and renders the
//! text the model reads from that item alone, so a chain replays it
//! unchanged.

pub mod apply_patch;
pub mod code_interpreter;
pub mod server_run;
pub mod shell;
pub mod web_search;

/// A function the model sees for a hosted tool (the engine turns it into a
/// tool definition owned by the executor).
#[derive(Debug, Clone, PartialEq)]
pub struct HostedFunction {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}

//! Windlass's built-in tools — `shell`, `read_file`, `write_file`,
//! `edit_file`, `list_dir`, `web_fetch` — off until the operator enables
//! them in `[builtins]`.
//!
//! They are served as an MCP server under the reserved label `windlass`:
//! in-process for the gateway ([`WithBuiltins`] wraps the MCP hub, so
//! listing, `mcp_call` items, approvals and streaming need nothing new), and
//! over stdio to other agents (`windlass mcp`). A request opts in with
//! `{"type": "mcp", "server_label": "windlass"}` (optionally with
//! `allowed_tools`); the model sees only the tools the operator enabled and
//! the request selected.

pub(crate) mod config;
pub(crate) mod fetch;
pub(crate) mod files;
mod hub;
mod shell;
mod stdio;
mod toolset;

pub use config::{BuiltinsConfig, FetchConfig, SandboxKind, ShellConfig, TOOL_NAMES};
pub use fetch::domain_allowed;
pub use hub::WithBuiltins;
pub use stdio::StdioServer;
pub use toolset::{Builtins, BuiltinsError, BUILTIN_LABEL};

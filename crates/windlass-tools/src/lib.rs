//! Windlass tool executors: the engine's MCP port on the official Rust MCP
//! SDK (`rmcp`).
//!
//! Layer: an adapter; depends on `windlass-engine` and `windlass-protocol` only,
//! never on a surface (`windlass-server`, `windlass`, `windlass-cli`) or another adapter.
//!
//! [`McpServers`] implements [`windlass_engine::McpHub`]:
//! - operator-configured servers ([`McpConfig`], the `[mcp]` table), over
//!   stdio (a child process) or streamable HTTP, connected in the
//!   background and kept connected, with their tool lists cached;
//! - servers a request declares by URL, checked by the outbound guard
//!   ([`ssrf`]) and reached only at the addresses it approved.
//!
//! ```no_run
//! # async fn demo() {
//! use windlass_tools::{McpConfig, McpServers};
//! let config: McpConfig = Default::default();
//! let hub = McpServers::start(config); // Arc<McpServers>, usable as Arc<dyn McpHub>
//! let _ = hub.status();
//! # }
//! ```

pub mod builtins;
mod client;
pub mod config;
mod configured;
pub mod content;
pub mod hosted;
mod hub;
pub mod mcp_server;
pub mod sandbox;
mod session;
pub mod ssrf;
mod trace_context;
mod transport;

pub use client::ListLimits;
pub use config::{ConfigError, McpConfig, McpServerConfig};
pub use configured::{ServerState, ServerStatus};
pub use hub::McpServers;

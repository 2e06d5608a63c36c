//! The `windlass` binary's wiring, apart from the SDK (the `windlass`
//! crate), which compiles none of it: the command line (`cli`), the config
//! file with its `WINDLASS_*` environment overrides (`config`,
//! `config_env`, `config_schema`), `serve` and the pieces it assembles
//! (upstream table, store, governance, OTLP export, retention), the
//! `windlass run` terminal view and the `windlass mcp` stdio server.
//! A library so its tests can reach it; `src/main.rs` is the binary.
//!
//! Layer: the outermost crate: it wires every other crate; nothing depends on it.

pub mod cli;
pub mod config;
pub mod config_env;
pub mod config_schema;
pub mod govern;
pub mod hosted;
pub mod hosted_tools;
pub mod mcp_mount;
pub mod mcp_stdio;
pub mod otlp;
pub mod resources;
pub mod retention;
pub mod run;
pub mod serve;
pub mod store_open;
mod trace_text;
pub mod upstreams;
pub mod webhooks;

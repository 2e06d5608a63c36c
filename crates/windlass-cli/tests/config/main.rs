//! The binary's wiring in process: the config file and its `WINDLASS_*`
//! variables, the example config, the upstream table, the built-ins with
//! governance as `serve` assembles them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod builtins_gateway;
mod env;
mod example;
mod upstream_routing;

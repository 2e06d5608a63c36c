//! The real `windlass` binary (`CARGO_BIN_EXE_windlass`): `serve` in front
//! of the scripted upstream (drain, hardening, OpenAI's variables, the
//! async-openai client, replicas on Postgres, acknowledged responses across
//! kill -9), `run` and `store prune`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod client_async_openai;
mod crash;
mod fd_caps;
mod hardening;
mod jwt_keys;
mod mcp_mount;
mod openai_env;
#[path = "../common/ports.rs"]
mod ports;
mod replica_support;
mod replicas;
mod replicas_governance;
mod replicas_wire;
mod retention;
mod retention_conversations;
mod run_builtins;
mod run_cli;
mod serve_drain;
mod webhooks;

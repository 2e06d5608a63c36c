//! The gateway over real HTTP (the `windlass-server` router in process, in
//! front of the scripted upstream, on a SQLite file): one test binary, a
//! module per area.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod background;
mod code_interpreter;
mod compact;
mod context_fit;
mod conversations;
mod errors;
mod hardening;
mod hosted;
mod kinds_support;
mod messages;
mod messages_context;
mod messages_sampling;
mod messages_server_tools;
mod messages_thinking;
mod meta;
mod prompts;
mod resume_keepalive;
mod server_run;
mod slow_upstream;
mod smoke;
mod sse_keepalive;
mod store;
mod store_false_db;
mod task_success;
mod text;
mod upstream_forwarding;
mod upstream_kinds;
mod value_check;
mod websocket;

//! The routes, one file per route family. A route file reads the request,
//! calls the engine (through `intake.rs` and `run/` when it starts a
//! response) and writes the answer; it never uses another route's file.

pub(crate) mod compact;
pub(crate) mod containers;
pub(crate) mod conversations;
pub(crate) mod create;
pub(crate) mod embeddings;
pub(crate) mod fallback;
pub(crate) mod files;
pub(crate) mod input_tokens;
pub(crate) mod mcp;
pub(crate) mod meta;
pub(crate) mod metrics;
pub(crate) mod prompts;
pub(crate) mod responses;
pub(crate) mod vector_store_files;
pub(crate) mod vector_stores;
pub(crate) mod ws;

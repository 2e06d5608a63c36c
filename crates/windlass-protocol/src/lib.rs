//! OpenResponses wire types (spec release 2026-04-24) plus the OpenAI
//! Responses extensions real clients parse (MCP items, `requires_action`).
//!
//! Layer: the innermost crate; it depends on no Windlass crate.
//!
//! Pure data: serde only, no I/O. Unknown item, content, tool and event types
//! deserialize into an `Unknown` variant that keeps the raw JSON, so nothing a
//! client sends is lost between parsing and validation.
//!
//! ```
//! use windlass_protocol::{CreateResponseRequest, Input};
//! let req: CreateResponseRequest =
//!     serde_json::from_str(r#"{"model":"m","input":"Hello"}"#).unwrap();
//! assert_eq!(req.input, Some(Input::Text("Hello".into())));
//! ```

// A public crate: every public item says what it is and why it exists.
#![warn(missing_docs)]

mod item_status;
mod open_enum;
mod tool_output;

pub mod anthropic;
pub mod apply_patch;
pub mod callers;
pub mod client_tools;
pub mod code_interpreter;
pub mod compact;
pub mod computer;
pub mod containers;
pub mod content;
pub mod embeddings;
pub mod error;
pub mod events;
pub mod file_search;
pub mod files;
pub mod hosted_render;
pub mod hosted_replay;
pub mod ids;
pub mod image_generation;
pub mod include;
pub mod items;
pub mod mcp;
pub mod obfuscation;
pub mod prompt_expand;
pub mod prompts;
pub mod request;
pub mod response;
pub mod shell_calls;
pub mod tools;
pub mod vector_stores;
pub mod web_search;
pub mod webhook_event;

pub use apply_patch::*;
pub use callers::*;
pub use client_tools::*;
pub use code_interpreter::*;
pub use compact::*;
pub use computer::*;
pub use containers::*;
pub use content::*;
pub use embeddings::*;
pub use error::*;
pub use events::*;
pub use file_search::*;
pub use files::*;
pub use image_generation::*;
pub use items::*;
pub use mcp::*;
pub use prompt_expand::{expand as expand_prompt, Expanded, PromptError};
pub use prompts::*;
pub use request::*;
pub use response::*;
pub use shell_calls::*;
pub use tools::*;
pub use vector_stores::*;
pub use web_search::*;
pub use webhook_event::*;

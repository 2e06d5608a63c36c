//! OpenResponses wire types (spec release 2026-04-24) plus the OpenAI
//! Responses extensions real clients parse (MCP items, `requires_action`).
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

mod open_enum;

pub mod client_tools;
pub mod compact;
pub mod content;
pub mod error;
pub mod events;
pub mod ids;
pub mod items;
pub mod mcp;
pub mod obfuscation;
pub mod prompt_expand;
pub mod prompts;
pub mod request;
pub mod response;
pub mod tools;
pub mod webhook_event;

pub use client_tools::*;
pub use compact::*;
pub use content::*;
pub use error::*;
pub use events::*;
pub use items::*;
pub use mcp::*;
pub use prompt_expand::{expand as expand_prompt, Expanded, PromptError};
pub use prompts::*;
pub use request::*;
pub use response::*;
pub use tools::*;
pub use webhook_event::*;

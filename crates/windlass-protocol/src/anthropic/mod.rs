//! Anthropic's Messages API wire (`POST /v1/messages`), as the Messages
//! surface reads and writes it: the request and its content blocks, the
//! `Message` answer, the stream's events and the error shape.
//!
//! Typed strictly where Anthropic is strict (unknown fields of the request
//! are refused by name, as Anthropic does) and open where a client may send
//! a type this version does not know (kept raw, so the surface can name it
//! in its error).

pub mod error;
pub mod events;
pub mod message;
pub mod request;
pub mod server_tools;

pub use error::*;
pub use events::*;
pub use message::*;
pub use request::*;
pub use server_tools::*;

/// Marks a redacted thinking block's `data` inside a reasoning item's
/// `encrypted_content` (a plain thinking block's holds its signature).
/// Shared by the `anthropic` upstream kind and the Messages surface, so a
/// block read on one side is written back the same on the other.
pub const REDACTED_THINKING_PREFIX: &str = "anthropic-redacted:";

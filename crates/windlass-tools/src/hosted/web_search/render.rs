//! What the model reads for a `web_search_call` and the `url_citation`s of
//! an answer: pure functions of the item, kept in `windlass-protocol`
//! (`hosted_render`) so the engine's replay renders the same text.

pub use windlass_protocol::hosted_render::{url_citations as citations, web_search_text as render};

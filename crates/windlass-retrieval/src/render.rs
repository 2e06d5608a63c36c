//! What the model sees of a `file_search` call, and the citations read back
//! from its answer: pure functions of the item, kept in `windlass-protocol`
//! (`hosted_render`, where the citation format is documented) so the
//! engine's replay renders the same text.

pub use windlass_protocol::hosted_render::{
    file_citations as citations, file_search_text as model_text, CITATION_INSTRUCTIONS,
    FILE_SEARCH_DESCRIPTION as TOOL_DESCRIPTION,
};

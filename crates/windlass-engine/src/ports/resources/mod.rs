//! Ports of the resources the API manages beside responses: uploaded files,
//! vector stores and their chunks, and the embedder that indexes them. The
//! server's routes and the `file_search` executor call them; the loop itself
//! never does.

pub mod containers;
pub mod embeddings;
pub mod files;
pub mod prompts;
pub mod vector_stores;

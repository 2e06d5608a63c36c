//! Retrieval for Windlass: what turns uploaded files into searchable vector
//! store chunks, and what the Vector stores API and the `file_search` tool
//! search with.
//!
//! Layer: an adapter; depends on `windlass-engine` and `windlass-protocol` only
//! (the store and providers only in its tests), never on a surface.
//!
//! * [`extract`]: text from txt, md, json, source code, HTML and PDF.
//! * [`chunk`]: cl100k_base token windows (`auto`: 800 tokens, 400 overlap).
//! * [`Ingestor`]: one attached file end to end (extract, chunk, embed when
//!   the store has an embedding model, write all chunks and the status in
//!   one transaction), and the claim loop a background worker runs.
//! * [`Searcher`]: a search's checks, the query embedded when an embedding
//!   model is configured, the store's hybrid search, and the wire answers.
//! * [`FileSearchExecutor`]: the `file_search` hosted tool in the loop.
//! * [`render`]: the `file_search` output the model sees and the
//!   `file_citation` annotations read from its answer.
//!
//! Storage is behind the engine's ports (`FileStore`, `VectorStoreStore`,
//! `Embedder`); `windlass-store` implements them on SQLite and Postgres and
//! `windlass-providers` the embeddings client. This crate is apart from
//! `windlass-tools` so the PDF parser and tokenizer tables are built only
//! where retrieval is wanted.

pub mod chunk;
mod executor;
pub mod extract;
mod ingest;
pub mod render;
mod search;

pub use chunk::{chunk, count_tokens, ChunkError, TextChunk};
pub use executor::FileSearchExecutor;
pub use extract::{extract, ExtractError, FileKind};
pub use ingest::{Ingested, Ingestor};
pub use search::{call_results, check, results_page, SearchError, SearchParams, Searcher};

//! Response persistence for Windlass.
//!
//! Layer: an adapter; depends on `windlass-engine` and `windlass-protocol` only,
//! never on a surface (`windlass-server`, `windlass`, `windlass-cli`) or another adapter.
//!
//! Three implementations of [`windlass_engine::ResponseStore`] with the same
//! semantics: `SqliteStore` for one process (one WAL-mode file, feature
//! `sqlite`), `PgStore` for several replicas sharing one Postgres database
//! (feature `postgres`, with `PgCancelBus` for cancels across replicas), and
//! [`MemoryStore`] for tests and setups that disable storage on disk.
//!
//! Both store every item once and let a response reference items by key: its
//! history (the context it continued from), its own input and its output. A
//! continuation references its predecessor's items instead of copying them,
//! so long chains stay cheap to save and load, and deleting a response in the
//! middle of a chain leaves its successors intact.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod codec;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod container_codec;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod conversation_codec;
mod memory;
mod memory_containers;
mod memory_conversations;
mod memory_prompts;
mod memory_runs;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod prompt_codec;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod retrieval;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{
    is_postgres_url, PgCancelBus, PgCounters, PgOptions, PgQuota, PgSslMode, PgStore, PgTlsSummary,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{DiskUsage, SqliteOptions, SqliteStore, SAVE_THREAD_NAME, SAVE_TIMING_TARGET};

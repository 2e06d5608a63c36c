//! The Postgres store: several replicas share one database.
//!
//! Same layout and semantics as the SQLite store (see `migrations-pg/`):
//! items stored once, responses referencing them by key in three sections
//! (history, input, output), and a response's history named by the response
//! it continues (`history_parent`) instead of copied. A save is one
//! statement and a context load one query, so each is one round trip.
//!
//! TLS follows libpq's URL parameters (`sslmode`, `sslrootcert`, `sslcert`,
//! `sslkey`; see `tls.rs`), on rustls.

mod cancel;
mod containers;
mod conversations;
mod counters;
mod error;
mod files;
mod ingestion;
mod migrate;
mod pgvector;
mod pool;
mod prompts;
mod quota;
mod read;
mod runs;
mod sections;
mod snapshot;
mod tls;
mod vector_expiry;
mod vector_rows;
mod vector_search;
mod vector_stores;
mod write;

use deadpool_postgres::{Object, Pool, PoolError};
use tokio_postgres_rustls::MakeRustlsConnect;
use windlass_engine::{ItemPage, NewResponse, PageRequest, ResponseStore, StoreError, Trace};
use windlass_protocol::{Item, ResponseResource};

pub use cancel::PgCancelBus;
pub use counters::PgCounters;
use error::backend;
pub use quota::PgQuota;
pub use tls::{PgSslMode, PgTlsSummary};

/// Settings of the connection pool.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Most connections this process opens.
    pub max_connections: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            max_connections: 16,
        }
    }
}

/// A [`ResponseStore`] backed by Postgres.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// Where the pool connects, for the cancel bus's own connection.
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    summary: PgTlsSummary,
    /// The schema of the pgvector extension, when the database has it.
    vector: Option<std::sync::Arc<str>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: never printed.
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user@host:port/db`) and brings the
    /// schema up to date.
    pub async fn open(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open_with(url, PgOptions::default()).await
    }

    /// [`open`](Self::open) with explicit pool settings.
    pub async fn open_with(url: &str, options: PgOptions) -> Result<PgStore, StoreError> {
        let tls::PgConnect {
            config,
            tls,
            summary,
        } = tls::parse(url)?;
        let pool = pool::build(&config, tls.clone(), options.max_connections)?;
        let mut store = PgStore {
            pool,
            config,
            tls,
            summary,
            vector: None,
        };
        // The first connection says what is wrong with the settings (a CA
        // or host name that does not match, a refused client certificate).
        let mut conn = store.pool.get().await.map_err(|e| store.first_error(e))?;
        migrate::migrate(&mut conn).await?;
        store.vector = pgvector::detect(&mut conn).await?;
        Ok(store)
    }

    /// Whether vector similarity runs in the database (pgvector), rather
    /// than in the gateway over the stored arrays.
    pub fn has_pgvector(&self) -> bool {
        self.vector.is_some()
    }

    /// The TLS settings in force, for the start-up log (no secrets).
    pub fn tls_summary(&self) -> &PgTlsSummary {
        &self.summary
    }

    fn first_error(&self, error: PoolError) -> StoreError {
        let host = match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => String::new(),
        };
        StoreError::Backend(tls::explain_connect_error(&error, &self.summary, &host))
    }

    /// Starts the cancel bus of this database (`LISTEN`/`NOTIFY`; one
    /// dedicated connection plus the pool for publishing).
    pub async fn cancel_bus(&self) -> Result<PgCancelBus, StoreError> {
        PgCancelBus::start(self.config.clone(), self.tls.clone(), self.pool.clone()).await
    }

    /// Request and token budgets kept in this database, shared by every
    /// replica using it.
    pub fn quota(&self) -> PgQuota {
        PgQuota::new(self.pool.clone())
    }

    /// Governance rate limits and budgets kept in this database, shared by
    /// every replica using it.
    pub fn counters(&self) -> PgCounters {
        PgCounters::new(self.pool.clone())
    }

    /// Retention, across every tenant: deletes the responses created before
    /// `created_before` (Unix seconds), newest first, each like a delete (so
    /// a newer response continuing from a pruned one keeps its whole
    /// history, and items go once nothing references them). Returns how
    /// many were deleted.
    pub async fn prune_before(&self, created_before: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(created_before).unwrap_or(i64::MAX);
        let mut conn = self.conn().await?;
        let mut deleted = 0;
        loop {
            let batch = conn
                .query(
                    "SELECT id, tenant FROM responses WHERE created_at < $1 \
                     ORDER BY created_at DESC, id DESC LIMIT 100",
                    &[&before],
                )
                .await
                .map_err(backend)?;
            if batch.is_empty() {
                return Ok(deleted);
            }
            for row in batch {
                let (id, tenant): (String, String) = (row.get(0), row.get(1));
                if write::delete(&mut conn, &tenant, &id).await? {
                    deleted += 1;
                }
            }
        }
    }

    /// Empties every table (benchmarks start each run from an empty
    /// database). Never called by the server.
    pub async fn truncate_for_bench(&self) -> Result<(), StoreError> {
        let conn = self.conn().await?;
        conn.batch_execute(
            "TRUNCATE response_items, response_traces, responses, items, \
             live_runs, response_events, quota_buckets, governance_counters, conversation_items, conversations, \
             vector_store_chunks, vector_store_files, vector_store_batches, vector_stores, files",
        )
        .await
        .map_err(backend)
    }

    /// A pooled connection.
    async fn conn(&self) -> Result<Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError::Backend(format!("postgres connection: {e}")))
    }
}

/// Whether `db` names a Postgres database rather than a SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

#[async_trait::async_trait]
impl ResponseStore for PgStore {
    async fn prune(&self, created_before: u64) -> Result<u64, StoreError> {
        self.prune_before(created_before).await
    }

    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        write::save(&*self.conn().await?, new).await
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ResponseResource>, StoreError> {
        read::get(&*self.conn().await?, tenant, id).await
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        read::load_context(&*self.conn().await?, tenant, id).await
    }

    async fn input_items(
        &self,
        tenant: &str,
        id: &str,
        page: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        read::input_items(&mut self.conn().await?, tenant, id, page).await
    }

    async fn delete(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        write::delete(&mut self.conn().await?, tenant, id).await
    }

    async fn find_item(&self, tenant: &str, item_id: &str) -> Result<Option<Item>, StoreError> {
        read::find_item(&*self.conn().await?, tenant, item_id).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let conn = self.conn().await?;
        conn.simple_query("SELECT 1").await.map_err(backend)?;
        Ok(())
    }

    async fn trace(&self, tenant: &str, response_id: &str) -> Result<Option<Trace>, StoreError> {
        read::trace(&*self.conn().await?, tenant, response_id).await
    }
}

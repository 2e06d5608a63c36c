//! Opens the response store `--db` names: a SQLite file, or a Postgres URL
//! shared by several replicas (then with the cancel bus between them).

use std::sync::Arc;

use windlass_engine::{
    CancelBus, ContainerStore, ConversationRetention, ConversationStore, FileStore,
    GovernanceCounters, LocalCancelBus, PromptStore, QuotaCounter, ResponseStore, RunStore,
    StoreError, VectorStoreStore,
};
use windlass_store::{is_postgres_url, PgOptions, PgStore, SqliteOptions, SqliteStore};

/// The store (one database behind both ports: a final save replaces the
/// live row) and the bus that reaches runs in other processes.
pub struct OpenedStore {
    pub store: Arc<dyn ResponseStore>,
    pub runs: Arc<dyn RunStore>,
    pub cancel_bus: Arc<dyn CancelBus>,
    /// Quotas counted in the database (shared by replicas); `None`: the
    /// server's in-process counter.
    pub quota: Option<Arc<dyn QuotaCounter>>,
    /// Conversations, in the same database.
    pub conversations: Option<Arc<dyn ConversationStore>>,
    /// Prompt templates, in the same database.
    pub prompts: Arc<dyn PromptStore>,
    /// Conversation retention, in the same database.
    pub conversation_retention: Arc<dyn ConversationRetention>,
    /// Governance rate limits and budgets counted in the database (shared
    /// by replicas); `None`: the gate's in-process counters.
    pub counters: Option<Arc<dyn GovernanceCounters>>,
    /// Uploaded files and containers, in the same database.
    pub files: Arc<dyn FileStore>,
    pub containers: Arc<dyn ContainerStore>,
    /// Vector stores, in the same database (what `file_search` searches).
    pub vector_stores: Arc<dyn VectorStoreStore>,
}

pub async fn open_store(
    db: &str,
    sqlite: &SqliteOptions,
    pg: &PgOptions,
) -> Result<OpenedStore, StoreError> {
    if is_postgres_url(db) {
        let store = Arc::new(PgStore::open_with(db, pg.clone()).await?);
        let bus = store.cancel_bus().await?;
        return Ok(OpenedStore {
            quota: Some(Arc::new(store.quota())),
            counters: Some(Arc::new(store.counters())),
            store: store.clone(),
            runs: store.clone(),
            cancel_bus: Arc::new(bus),
            prompts: store.clone(),
            conversation_retention: store.clone(),
            conversations: Some(store.clone()),
            vector_stores: store.clone(),
            files: store.clone(),
            containers: store,
        });
    }
    let store = Arc::new(SqliteStore::open_with(db, sqlite.clone()).await?);
    Ok(OpenedStore {
        store: store.clone(),
        runs: store.clone(),
        cancel_bus: Arc::new(LocalCancelBus),
        quota: None,
        prompts: store.clone(),
        counters: None,
        conversation_retention: store.clone(),
        conversations: Some(store.clone()),
        vector_stores: store.clone(),
        files: store.clone(),
        containers: store,
    })
}

/// `db` as it may be logged: a URL's password replaced by `***`.
pub fn display_db(db: &str) -> String {
    let Some((scheme, rest)) = db.split_once("://") else {
        return db.to_owned();
    };
    // The credentials end at the last `@` before the host's path.
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return db.to_owned();
    };
    let user = rest[..at].split(':').next().unwrap_or_default();
    let password = if rest[..at].contains(':') { ":***" } else { "" };
    format!("{scheme}://{user}{password}@{}", &rest[at + 1..])
}

#[cfg(test)]
mod tests {
    use super::display_db;

    #[test]
    fn passwords_never_reach_the_log() {
        assert_eq!(
            display_db("postgres://app:s3cr%40t@db:5432/windlass?sslmode=disable"),
            "postgres://app:***@db:5432/windlass?sslmode=disable"
        );
        assert_eq!(display_db("postgres://app@db/w"), "postgres://app@db/w");
        assert_eq!(display_db("postgres://db/w"), "postgres://db/w");
        assert_eq!(display_db("./windlass.db"), "./windlass.db");
    }
}

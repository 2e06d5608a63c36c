//! Embedded migrations, safe when several replicas start at once.
//!
//! Every replica runs them at start-up inside one transaction that first
//! takes a transaction-scoped advisory lock: the first replica applies what
//! is missing while the others wait on the lock, then find nothing left to
//! do. A failed migration rolls back whole.

use deadpool_postgres::Object;
use windlass_engine::StoreError;

use super::error::backend;

/// Migrations in order; a version is its position, from 1.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations-pg/0001_init.sql"),
    include_str!("../../migrations-pg/0002_live_runs.sql"),
    include_str!("../../migrations-pg/0003_tenants.sql"),
    include_str!("../../migrations-pg/0004_quotas.sql"),
    include_str!("../../migrations-pg/0005_conversations.sql"),
    include_str!("../../migrations-pg/0006_governance_counters.sql"),
    include_str!("../../migrations-pg/0007_conversation_activity.sql"),
    include_str!("../../migrations-pg/0008_files_vector_stores.sql"),
    include_str!("../../migrations-pg/0009_containers.sql"),
    include_str!("../../migrations-pg/0010_prompts.sql"),
    include_str!("../../migrations-pg/0011_vector_store_description_expiry.sql"),
    include_str!("../../migrations-pg/0012_chunk_embedding_dims.sql"),
];

/// The advisory lock key that serializes migrations (any fixed number; this
/// one is "windlass" in ASCII, truncated).
pub(super) const MIGRATION_LOCK: i64 = 0x7769_6e64_6c61_7373;

pub(super) async fn migrate(conn: &mut Object) -> Result<(), StoreError> {
    let tx = conn.transaction().await.map_err(backend)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(backend)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS windlass_migrations ( \
             version    INTEGER PRIMARY KEY, \
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(backend)?;
    let applied: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM windlass_migrations",
            &[],
        )
        .await
        .map_err(backend)?
        .get(0);
    let known = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
    if applied > known {
        return Err(StoreError::Backend(format!(
            "the database schema is version {applied}, newer than this build knows ({known}); \
             upgrade windlass"
        )));
    }
    for (version, sql) in (1..).zip(MIGRATIONS).skip(applied as usize) {
        tx.batch_execute(sql).await.map_err(|e| {
            StoreError::Backend(format!("postgres migration {version}: {}", detail(&e)))
        })?;
        tx.execute(
            "INSERT INTO windlass_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(backend)?;
        tracing::info!(version, "applied postgres migration");
    }
    tx.commit().await.map_err(backend)
}

fn detail(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_else(|| e.to_string())
}

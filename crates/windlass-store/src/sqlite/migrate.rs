//! Schema migrations: the files of `migrations/`, applied in order inside one
//! write transaction, the schema version kept in `PRAGMA user_version`.
//!
//! Databases created before this runner existed were migrated by sqlx: they
//! have `user_version` 0 and a `_sqlx_migrations` table listing the versions
//! applied. Those versions count as applied here, so such a file is not
//! migrated twice (migration 2's `ALTER TABLE` would fail). The table is left
//! in place: an older build opening the file still finds its bookkeeping.

use std::collections::BTreeSet;

use rusqlite::{Connection, TransactionBehavior};
use windlass_engine::StoreError;

/// Every migration, by version. Versions are never reused or edited once
/// released: a database records only the number it reached.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/0001_init.sql")),
    (2, include_str!("../../migrations/0002_history_parent.sql")),
    (3, include_str!("../../migrations/0003_traces.sql")),
    (4, include_str!("../../migrations/0004_tenants.sql")),
    (5, include_str!("../../migrations/0005_live_runs.sql")),
    (6, include_str!("../../migrations/0006_conversations.sql")),
    (
        7,
        include_str!("../../migrations/0007_conversation_activity.sql"),
    ),
    (
        8,
        include_str!("../../migrations/0008_files_vector_stores.sql"),
    ),
    (9, include_str!("../../migrations/0009_containers.sql")),
    (10, include_str!("../../migrations/0010_prompts.sql")),
    (
        11,
        include_str!("../../migrations/0011_vector_store_description_expiry.sql"),
    ),
    (
        12,
        include_str!("../../migrations/0012_chunk_embedding_dims.sql"),
    ),
    (
        13,
        include_str!("../../migrations/0013_trace_in_response.sql"),
    ),
];

/// Brings the schema of `conn`'s database up to date.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let fail = |e: rusqlite::Error| StoreError::Backend(format!("migration failed: {e}"));
    // IMMEDIATE: two processes opening the same new file migrate one after
    // the other, the second seeing the first's version.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(fail)?;
    let latest = MIGRATIONS.last().map_or(0, |m| m.0);
    if version > latest {
        return Err(StoreError::Backend(format!(
            "database schema version {version} is newer than this build knows ({latest})"
        )));
    }
    let mut applied: BTreeSet<i64> = (1..=version).collect();
    if version == 0 {
        applied.extend(sqlx_versions(&tx).map_err(fail)?);
    }
    let mut reached = version;
    for &(v, sql) in MIGRATIONS {
        if !applied.contains(&v) {
            tx.execute_batch(sql).map_err(fail)?;
        }
        reached = v;
    }
    if reached != version {
        tx.pragma_update(None, "user_version", reached)
            .map_err(fail)?;
    }
    tx.commit().map_err(fail)
}

/// The versions sqlx's migrator recorded as applied, if it ever ran here.
fn sqlx_versions(conn: &Connection) -> Result<Vec<i64>, rusqlite::Error> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master \
         WHERE type = 'table' AND name = '_sqlx_migrations')",
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare("SELECT version FROM _sqlx_migrations WHERE success")?;
    let versions = stmt.query_map([], |r| r.get(0))?;
    versions.collect()
}

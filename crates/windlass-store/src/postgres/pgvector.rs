//! pgvector, where the database has it: detected at start, created when the
//! server offers it and the role may (`CREATE EXTENSION` needs the right
//! privileges; pgvector 0.5+ is a trusted extension, so a database owner
//! may). Without it, similarity is computed in the gateway over the stored
//! `real[]` embeddings: same answers, more data read per search. An
//! administrator can run `CREATE EXTENSION vector;` later; it is picked up
//! at the next start.

use deadpool_postgres::Object;
use windlass_engine::StoreError;

use super::error::backend;

const SCHEMA_OF: &str = "SELECT n.nspname FROM pg_extension e \
     JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'";

/// The schema pgvector lives in (creating the extension when possible),
/// with the native column in place.
pub(super) async fn detect(conn: &mut Object) -> Result<Option<std::sync::Arc<str>>, StoreError> {
    let Some(schema) = find(conn).await? else {
        return Ok(None);
    };
    native_column(conn, &schema).await?;
    Ok(Some(schema.into()))
}

/// Adds `embedding_v` and fills it for chunks stored before pgvector was
/// there, under the migration lock (replicas start together).
async fn native_column(conn: &mut Object, schema: &str) -> Result<(), StoreError> {
    let vector = format!("{}.vector", quote(schema));
    let tx = conn.transaction().await.map_err(backend)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&super::migrate::MIGRATION_LOCK],
    )
    .await
    .map_err(backend)?;
    tx.batch_execute(&format!(
        "ALTER TABLE vector_store_chunks ADD COLUMN IF NOT EXISTS embedding_v {vector}; \
         UPDATE vector_store_chunks SET embedding_v = embedding::{vector} \
         WHERE embedding IS NOT NULL AND embedding_v IS NULL"
    ))
    .await
    .map_err(backend)?;
    tx.commit().await.map_err(backend)
}

async fn find(conn: &Object) -> Result<Option<String>, StoreError> {
    if let Some(row) = conn.query_opt(SCHEMA_OF, &[]).await.map_err(backend)? {
        return Ok(Some(row.get::<_, String>(0)));
    }
    let offered = conn
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'",
            &[],
        )
        .await
        .map_err(backend)?
        .is_some();
    if !offered {
        tracing::info!(
            "pgvector is not installed on the server: vector similarity runs in the gateway"
        );
        return Ok(None);
    }
    if let Err(e) = conn
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
    {
        // Another replica starting at the same moment may have created it.
        if let Some(row) = conn.query_opt(SCHEMA_OF, &[]).await.map_err(backend)? {
            return Ok(Some(row.get::<_, String>(0)));
        }
        tracing::warn!(
            error = %backend(e),
            "pgvector is installed but could not be created here (run CREATE EXTENSION vector as an \
             administrator); vector similarity runs in the gateway"
        );
        return Ok(None);
    }
    let row = conn.query_opt(SCHEMA_OF, &[]).await.map_err(backend)?;
    Ok(row.map(|r| r.get::<_, String>(0)))
}

/// `name` quoted as an identifier.
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

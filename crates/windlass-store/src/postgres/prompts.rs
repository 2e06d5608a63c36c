//! Prompts on Postgres (`migrations-pg/0006_prompts.sql`).
//!
//! Each operation is one statement (atomic on its own); the owner tenant is
//! part of every lookup, so another tenant's prompt is an unknown id.

use tokio_postgres::error::SqlState;
use tokio_postgres::Row;
use windlass_engine::{PromptStore, StoreError};
use windlass_protocol::{Prompt, PromptTemplate, PromptVersion};

use super::error::backend;
use super::PgStore;
use crate::conversation_codec::encode_metadata;
use crate::prompt_codec::{
    decode_prompt, decode_version, encode_template, version_number, PromptRow,
};

const CREATE: &str = "\
WITH p AS ( \
    INSERT INTO prompts (id, tenant, created_at, name, metadata, latest) \
    VALUES ($1, $2, $3, $4, $5, 1) RETURNING id \
) \
INSERT INTO prompt_versions (prompt_id, version, created_at, template) \
SELECT p.id, 1, $6, $7 FROM p";

/// Bumps `latest` (concurrent additions to one prompt wait on its row, so
/// each gets its own number) and inserts the version under it.
const ADD_VERSION: &str = "\
WITH p AS ( \
    UPDATE prompts SET latest = latest + 1 WHERE id = $1 AND tenant = $2 \
    RETURNING id, latest \
), added AS ( \
    INSERT INTO prompt_versions (prompt_id, version, created_at, template) \
    SELECT p.id, p.latest, $3, $4 FROM p \
) \
SELECT latest FROM p";

const SELECT_PROMPT: &str = "SELECT id, created_at, name, metadata, latest FROM prompts";

fn prompt(row: &Row) -> Result<Prompt, StoreError> {
    decode_prompt(PromptRow {
        id: row.get(0),
        created_at: row.get(1),
        name: row.get(2),
        metadata: row.get(3),
        latest: row.get(4),
    })
}

fn secs(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl PromptStore for PgStore {
    async fn create_prompt(
        &self,
        tenant: &str,
        prompt: &Prompt,
        first: &PromptVersion,
    ) -> Result<(), StoreError> {
        let metadata = encode_metadata(&prompt.metadata)?;
        let template = encode_template(&first.template)?;
        let conn = self.conn().await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
            &prompt.id,
            &tenant,
            &secs(prompt.created_at),
            &prompt.name,
            &metadata,
            &secs(first.created_at),
            &template,
        ];
        match conn.execute(CREATE, &params).await {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_db_error().is_some_and(|d| {
                    *d.code() == SqlState::UNIQUE_VIOLATION
                        && d.constraint() == Some("prompts_pkey")
                }) =>
            {
                Err(StoreError::Duplicate(prompt.id.clone()))
            }
            Err(e) => Err(backend(e)),
        }
    }

    async fn add_prompt_version(
        &self,
        tenant: &str,
        id: &str,
        template: &PromptTemplate,
        created_at: u64,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let encoded = encode_template(template)?;
        let row = self
            .conn()
            .await?
            .query_opt(ADD_VERSION, &[&id, &tenant, &secs(created_at), &encoded])
            .await
            .map_err(backend)?;
        Ok(row.map(|r| {
            let number = u64::try_from(r.get::<_, i64>(0)).unwrap_or(0);
            PromptVersion::new(id, number, created_at, template.clone())
        }))
    }

    async fn get_prompt(&self, tenant: &str, id: &str) -> Result<Option<Prompt>, StoreError> {
        let sql = format!("{SELECT_PROMPT} WHERE id = $1 AND tenant = $2");
        let row = self
            .conn()
            .await?
            .query_opt(&sql, &[&id, &tenant])
            .await
            .map_err(backend)?;
        row.as_ref().map(prompt).transpose()
    }

    async fn list_prompts(&self, tenant: &str) -> Result<Vec<Prompt>, StoreError> {
        let sql = format!("{SELECT_PROMPT} WHERE tenant = $1 ORDER BY created_at DESC, id DESC");
        let rows = self
            .conn()
            .await?
            .query(&sql, &[&tenant])
            .await
            .map_err(backend)?;
        rows.iter().map(prompt).collect()
    }

    async fn prompt_version(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let number = match version {
            Some(v) => match version_number(v) {
                Some(n) => Some(n),
                None => return Ok(None),
            },
            None => None,
        };
        // Without a number, the prompt's latest.
        let row = self
            .conn()
            .await?
            .query_opt(
                "SELECT v.version, v.created_at, v.template FROM prompts p \
                 JOIN prompt_versions v ON v.prompt_id = p.id \
                 AND v.version = COALESCE($3, p.latest) \
                 WHERE p.id = $1 AND p.tenant = $2",
                &[&id, &tenant, &number],
            )
            .await
            .map_err(backend)?;
        row.map(|r| decode_version(id, r.get(0), r.get(1), r.get(2)))
            .transpose()
    }

    async fn prompt_versions(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<PromptVersion>>, StoreError> {
        // The prompt row comes along (with null version columns when it has
        // none), so an unknown prompt and an empty list differ.
        let rows = self
            .conn()
            .await?
            .query(
                "SELECT v.version, v.created_at, v.template FROM prompts p \
                 LEFT JOIN prompt_versions v ON v.prompt_id = p.id \
                 WHERE p.id = $1 AND p.tenant = $2 ORDER BY v.version",
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        if rows.is_empty() {
            return Ok(None);
        }
        rows.iter()
            .filter_map(|r| {
                let version: Option<i64> = r.get(0);
                version.map(|v| decode_version(id, v, r.get(1), r.get(2)))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    async fn delete_prompt(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        // The versions go with it (ON DELETE CASCADE).
        let n = self
            .conn()
            .await?
            .execute(
                "DELETE FROM prompts WHERE id = $1 AND tenant = $2",
                &[&id, &tenant],
            )
            .await
            .map_err(backend)?;
        Ok(n > 0)
    }
}

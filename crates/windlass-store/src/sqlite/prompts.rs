//! Prompts on SQLite (`migrations/0007_prompts.sql`).

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use windlass_engine::{PromptStore, StoreError};
use windlass_protocol::{Prompt, PromptTemplate, PromptVersion};

use super::write::on_writer;
use super::SqliteStore;
use crate::codec::{backend, is_unique_violation};
use crate::conversation_codec::encode_metadata;
use crate::prompt_codec::{
    decode_prompt, decode_version, encode_template, version_number, PromptRow,
};

const PROMPT_COLUMNS: &str = "id, created_at, name, metadata, latest";

fn prompt_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PromptRow> {
    Ok(PromptRow {
        id: r.get(0)?,
        created_at: r.get(1)?,
        name: r.get(2)?,
        metadata: r.get(3)?,
        latest: r.get(4)?,
    })
}

fn read_prompt(conn: &Connection, tenant: &str, id: &str) -> Result<Option<Prompt>, StoreError> {
    let sql = format!("SELECT {PROMPT_COLUMNS} FROM prompts WHERE id = ?1 AND tenant = ?2");
    let row = conn
        .prepare_cached(&sql)
        .and_then(|mut s| s.query_row(params![id, tenant], prompt_row).optional())
        .map_err(backend)?;
    row.map(decode_prompt).transpose()
}

fn insert_version(
    conn: &Connection,
    id: &str,
    number: i64,
    created_at: i64,
    template: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO prompt_versions (prompt_id, version, created_at, template) \
         VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut s| s.execute(params![id, number, created_at, template]))
    .map_err(backend)?;
    Ok(())
}

fn secs(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl PromptStore for SqliteStore {
    async fn create_prompt(
        &self,
        tenant: &str,
        prompt: &Prompt,
        first: &PromptVersion,
    ) -> Result<(), StoreError> {
        let metadata = encode_metadata(&prompt.metadata)?;
        let template = encode_template(&first.template)?;
        let (tenant, id, name) = (tenant.to_owned(), prompt.id.clone(), prompt.name.clone());
        let (created_at, first_at) = (secs(prompt.created_at), secs(first.created_at));
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            tx.prepare_cached(
                "INSERT INTO prompts (id, tenant, created_at, name, metadata, latest) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 1)",
            )
            .and_then(|mut s| s.execute(params![id, tenant, created_at, name, metadata]))
            .map_err(|e| match is_unique_violation(&e) {
                true => StoreError::Duplicate(id.clone()),
                false => backend(e),
            })?;
            insert_version(&tx, &id, 1, first_at, &template)?;
            tx.commit().map_err(backend)
        })
        .await
    }

    async fn add_prompt_version(
        &self,
        tenant: &str,
        id: &str,
        template: &PromptTemplate,
        created_at: u64,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let encoded = encode_template(template)?;
        let template = template.clone();
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let latest: Option<i64> = tx
                .prepare_cached("SELECT latest FROM prompts WHERE id = ?1 AND tenant = ?2")
                .and_then(|mut s| s.query_row(params![id, tenant], |r| r.get(0)).optional())
                .map_err(backend)?;
            let Some(latest) = latest else {
                return Ok(None);
            };
            let number = latest + 1;
            tx.execute(
                "UPDATE prompts SET latest = ?1 WHERE id = ?2",
                params![number, id],
            )
            .map_err(backend)?;
            insert_version(&tx, &id, number, secs(created_at), &encoded)?;
            tx.commit().map_err(backend)?;
            let number = u64::try_from(number).unwrap_or(0);
            Ok(Some(PromptVersion::new(&id, number, created_at, template)))
        })
        .await
    }

    async fn get_prompt(&self, tenant: &str, id: &str) -> Result<Option<Prompt>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        read_prompt(conn.conn()?, tenant, id)
    }

    async fn list_prompts(&self, tenant: &str) -> Result<Vec<Prompt>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let sql = format!(
            "SELECT {PROMPT_COLUMNS} FROM prompts WHERE tenant = ? \
             ORDER BY created_at DESC, id DESC"
        );
        let rows = conn
            .conn()?
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map([tenant], prompt_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        rows.into_iter().map(decode_prompt).collect()
    }

    async fn prompt_version(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<PromptVersion>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let conn = conn.conn()?;
        let tx = conn.transaction().map_err(backend)?;
        let Some(prompt) = read_prompt(&tx, tenant, id)? else {
            return Ok(None);
        };
        let number = match version {
            None => version_number(&prompt.latest_version),
            Some(v) => version_number(v),
        };
        let Some(number) = number else {
            return Ok(None);
        };
        let row: Option<(i64, String)> = tx
            .prepare_cached(
                "SELECT created_at, template FROM prompt_versions \
                 WHERE prompt_id = ?1 AND version = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![id, number], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(backend)?;
        row.map(|(at, t)| decode_version(id, number, at, &t))
            .transpose()
    }

    async fn prompt_versions(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Vec<PromptVersion>>, StoreError> {
        let mut conn = self.readers.acquire(&self.writer).await?;
        let conn = conn.conn()?;
        let tx = conn.transaction().map_err(backend)?;
        if read_prompt(&tx, tenant, id)?.is_none() {
            return Ok(None);
        }
        let rows: Vec<(i64, i64, String)> = tx
            .prepare_cached(
                "SELECT version, created_at, template FROM prompt_versions \
                 WHERE prompt_id = ? ORDER BY version",
            )
            .and_then(|mut s| {
                s.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        rows.iter()
            .map(|(v, at, t)| decode_version(id, *v, *at, t))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    async fn delete_prompt(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        on_writer(&self.writer, move |conn| {
            let tx = conn.transaction().map_err(backend)?;
            if read_prompt(&tx, &tenant, &id)?.is_none() {
                return Ok(false);
            }
            tx.execute("DELETE FROM prompt_versions WHERE prompt_id = ?", [&id])
                .map_err(backend)?;
            tx.execute("DELETE FROM prompts WHERE id = ?", [&id])
                .map_err(backend)?;
            tx.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }
}

//! Retention: `[store] retention_days` (responses) and
//! `conversation_retention_days` (conversations idle that long) pruned
//! hourly by `windlass serve`, and `windlass store prune` for operators
//! (cron, one-off clean-ups).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use windlass_engine::{ConversationRetention, ResponseStore, StoreError};
use windlass_store::{PgOptions, SqliteOptions};

use crate::cli::PruneArgs;
use crate::config::{check_conversation_retention, check_retention, load_file, ConfigError};
use crate::store_open::open_store;

const DAY_SECS: u64 = 24 * 60 * 60;

/// How often `serve` prunes (and once at start).
const PRUNE_EVERY: Duration = Duration::from_secs(60 * 60);

/// The creation time (Unix seconds) before which responses are older than
/// `days`.
pub fn cutoff(days: u32, now_secs: u64) -> u64 {
    now_secs.saturating_sub(u64::from(days) * DAY_SECS)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Deletes what is older than `days`; returns how many responses went.
pub async fn prune(store: &dyn ResponseStore, days: u32) -> Result<u64, StoreError> {
    store.prune(cutoff(days, now_secs())).await
}

/// Deletes the conversations idle for more than `days`; returns how many
/// went.
pub async fn prune_conversations(
    store: &dyn ConversationRetention,
    days: u32,
) -> Result<u64, StoreError> {
    store.prune_conversations(cutoff(days, now_secs())).await
}

/// Prunes responses now and every hour for as long as the runtime runs.
pub fn spawn(store: Arc<dyn ResponseStore>, days: u32) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(PRUNE_EVERY);
        loop {
            tick.tick().await;
            match prune(store.as_ref(), days).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(pruned = n, retention_days = days, "retention"),
                Err(e) => tracing::error!(error = %e, "retention prune failed"),
            }
        }
    })
}

/// Prunes idle conversations now and every hour.
pub fn spawn_conversations(
    store: Arc<dyn ConversationRetention>,
    days: u32,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(PRUNE_EVERY);
        loop {
            tick.tick().await;
            match prune_conversations(store.as_ref(), days).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    pruned_conversations = n,
                    conversation_retention_days = days,
                    "retention"
                ),
                Err(e) => tracing::error!(error = %e, "conversation retention prune failed"),
            }
        }
    })
}

#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("no age given: pass --older-than-days N or --conversations-idle-days N, or set [store] retention_days or conversation_retention_days")]
    NoAge,
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What one `store prune` did: (count, days) per kind that was pruned.
#[derive(Debug, Default)]
struct Pruned {
    responses: Option<(u64, u32)>,
    conversations: Option<(u64, u32)>,
}

/// `windlass store prune`: exit 0 with the counts on stdout, 1 on failure.
pub async fn prune_main(args: PruneArgs) -> ExitCode {
    match prune_command(args).await {
        Ok(done) => {
            if let Some((n, days)) = done.responses {
                println!("pruned {n} responses older than {days} days");
            }
            if let Some((n, days)) = done.conversations {
                println!("pruned {n} conversations idle for more than {days} days");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("windlass: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn prune_command(args: PruneArgs) -> Result<Pruned, PruneError> {
    let file = match &args.config {
        Some(path) => Some(load_file(path)?),
        None => None,
    };
    let store_file = file.as_ref().map(|f| &f.store);
    let configured = check_retention(store_file.and_then(|s| s.retention_days))?;
    let configured_conversations =
        check_conversation_retention(store_file.and_then(|s| s.conversation_retention_days))?;
    let days = args.older_than_days.or(configured);
    let conversation_days = args.conversations_idle_days.or(configured_conversations);
    if days.is_none() && conversation_days.is_none() {
        return Err(PruneError::NoAge);
    }
    let db = args
        .db
        .or_else(|| file.and_then(|f| f.db))
        .unwrap_or_else(|| "./windlass.db".to_owned());
    let opened = open_store(&db, &SqliteOptions::default(), &PgOptions::default()).await?;
    let mut done = Pruned::default();
    if let Some(days) = days {
        done.responses = Some((prune(opened.store.as_ref(), days).await?, days));
    }
    if let Some(days) = conversation_days {
        let n = prune_conversations(opened.conversation_retention.as_ref(), days).await?;
        done.conversations = Some((n, days));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cutoff_is_days_before_now() {
        assert_eq!(cutoff(1, 100_000), 100_000 - DAY_SECS);
        assert_eq!(cutoff(2, 1_000), 0, "no underflow");
    }
}

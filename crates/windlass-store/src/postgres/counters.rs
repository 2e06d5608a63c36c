//! The governance counter port on Postgres: the same windows as the
//! in-process counters (`windlass-governance`), kept in
//! `governance_counters` so every replica enforces one limit. One check is
//! one statement (`windlass_counter_take`, migration 6), prepared once per
//! connection: one round trip.

use deadpool_postgres::Pool;
use windlass_engine::{CounterError, CounterTake, CounterVerdict, GovernanceCounters};

const TAKE: &str = "SELECT refused, remaining FROM windlass_counter_take($1, $2, $3, $4, $5)";

/// [`GovernanceCounters`] shared by the replicas of one database.
#[derive(Clone)]
pub struct PgCounters {
    pool: Pool,
}

impl PgCounters {
    pub(crate) fn new(pool: Pool) -> PgCounters {
        PgCounters { pool }
    }
}

fn failed(e: impl std::fmt::Display) -> CounterError {
    CounterError(format!("postgres: {e}"))
}

#[async_trait::async_trait]
impl GovernanceCounters for PgCounters {
    async fn take(&self, takes: &[CounterTake]) -> Result<CounterVerdict, CounterError> {
        if takes.is_empty() {
            return Ok(CounterVerdict::Allowed);
        }
        let keys: Vec<&str> = takes.iter().map(|t| t.key.as_str()).collect();
        let amounts: Vec<f64> = takes.iter().map(|t| t.amount as f64).collect();
        let caps: Vec<f64> = takes.iter().map(|t| t.window.capacity() as f64).collect();
        let rates: Vec<f64> = takes.iter().map(|t| t.window.refill_per_second()).collect();
        let idles: Vec<f64> = takes
            .iter()
            .map(|t| t.window.idle().as_secs_f64())
            .collect();
        let conn = self.pool.get().await.map_err(failed)?;
        let statement = conn.prepare_cached(TAKE).await.map_err(failed)?;
        let row = conn
            .query_one(&statement, &[&keys, &amounts, &caps, &rates, &idles])
            .await
            .map_err(failed)?;
        let refused: i32 = row.get(0);
        let remaining: f64 = row.get(1);
        Ok(match usize::try_from(refused) {
            Ok(0) | Err(_) => CounterVerdict::Allowed,
            Ok(index) => CounterVerdict::Refused {
                index: index - 1,
                remaining: remaining.max(0.0).floor() as u64,
            },
        })
    }
}

//! The governance counter port: "take N from counter K, whose window is W,
//! and tell me whether the limit holds", for the rate limits (per key, per
//! key and tool) and the per-response budgets of the governance gate.
//!
//! Counted in the process for one server (the embedded default) or in
//! Postgres for replicas that must share one limit. The windows are the
//! quotas' (`ports/host/quota.rs`): a rolling window is a token bucket that
//! holds at most `capacity`, refills continuously at `per_minute` per
//! minute and starts full; a total never refills and is forgotten after
//! `idle` without use (a response's budget outlives the response by that
//! much).

use std::time::Duration;

/// How a counter fills up again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterWindow {
    /// A token bucket: at most `capacity`, refilled at `per_minute` per
    /// minute, starting full.
    Rolling {
        /// Most the bucket holds.
        capacity: u64,
        /// How much it refills per minute.
        per_minute: u64,
    },
    /// A total of `limit` that never refills; the counter is dropped (full
    /// again) after `idle` without a take.
    Total {
        /// The total that may be taken.
        limit: u64,
        /// How long without a take before the counter is forgotten.
        idle: Duration,
    },
}

impl CounterWindow {
    /// The most the counter holds.
    pub fn capacity(&self) -> u64 {
        match *self {
            CounterWindow::Rolling { capacity, .. } => capacity,
            CounterWindow::Total { limit, .. } => limit,
        }
    }

    /// Refill per second (0 for a total).
    pub fn refill_per_second(&self) -> f64 {
        match *self {
            CounterWindow::Rolling { per_minute, .. } => per_minute as f64 / 60.0,
            CounterWindow::Total { .. } => 0.0,
        }
    }

    /// How long an untouched counter is kept: until it is full again for a
    /// rolling window, `idle` for a total.
    pub fn idle(&self) -> Duration {
        match *self {
            CounterWindow::Rolling { .. } => Duration::ZERO,
            CounterWindow::Total { idle, .. } => idle,
        }
    }
}

/// One amount to take from one counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterTake {
    /// The counter's stable name (a primary key in a shared table); the
    /// keys of one call are distinct.
    pub key: String,
    /// How much to take.
    pub amount: u64,
    /// How the counter fills up again.
    pub window: CounterWindow,
}

/// The answer to [`GovernanceCounters::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterVerdict {
    /// Every amount was taken.
    Allowed,
    /// Nothing was taken: the take at `index` (the first, in the order
    /// given, that did not fit) found only `remaining` left.
    Refused {
        /// The position of the take that did not fit.
        index: usize,
        /// What was left of that counter.
        remaining: u64,
    },
}

/// The counters' backend failed; the message says how.
#[derive(Debug, thiserror::Error)]
#[error("governance counters failed: {0}")]
pub struct CounterError(pub String);

/// Counters shared by whoever must see one limit.
#[async_trait::async_trait]
pub trait GovernanceCounters: Send + Sync {
    /// Takes every amount, all or nothing: when one does not fit, no
    /// counter changes. One round trip for a shared implementation.
    async fn take(&self, takes: &[CounterTake]) -> Result<CounterVerdict, CounterError>;
}

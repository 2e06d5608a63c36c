//! This process's side of background mode: its replica id, the lease of
//! its live rows and the worker slots (`[server.background]`).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Semaphore;
use windlass_engine::UnixMillis;

/// Background-mode settings (`[server.background]`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BackgroundConfig {
    /// Background responses running at once; more wait `queued`.
    pub workers: usize,
    /// How long a replica's claim on its live runs lasts without renewal;
    /// runs of a process that died are recovered this long after it stopped
    /// renewing (renewed every third of it).
    pub lease_ms: u64,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        BackgroundConfig {
            workers: 16,
            lease_ms: 15_000,
        }
    }
}

/// This process's side of background mode. Cheap to share.
pub struct Background {
    /// Identifies this process in live rows (unique per start).
    pub replica: String,
    pub lease: Duration,
    pub(super) workers: Arc<Semaphore>,
}

impl Background {
    pub fn new(config: &BackgroundConfig) -> Background {
        Background {
            replica: windlass_protocol::ids::new_id("replica"),
            lease: Duration::from_millis(config.lease_ms.max(300)),
            workers: Arc::new(Semaphore::new(config.workers.max(1))),
        }
    }

    /// The lease end of a claim made now.
    pub fn lease_until(&self) -> UnixMillis {
        now_millis() + u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)
    }
}

pub fn now_millis() -> UnixMillis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

//! The in-process [`GovernanceCounters`]: token buckets in a map, the
//! embedded default (replicas share counters through the Postgres
//! implementation in `windlass-store`). Same arithmetic as the quotas'
//! in-process counter: a level refilled continuously up to the capacity.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use windlass_engine::{
    CounterError, CounterTake, CounterVerdict, CounterWindow, GovernanceCounters,
};

/// Sweep forgotten counters only when the table is this large.
const SWEEP_AT: usize = 1024;

#[derive(Debug, Clone, Copy)]
struct Counter {
    level: f64,
    at: Instant,
    /// When it is full again (rolling) or forgotten (total).
    expires: Instant,
}

impl Counter {
    /// The level at `now`: refilled for a rolling window; a counter past
    /// its expiry is full.
    fn level_at(&self, window: &CounterWindow, now: Instant) -> f64 {
        let capacity = window.capacity() as f64;
        if now >= self.expires {
            return capacity;
        }
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.level + elapsed * window.refill_per_second()).min(capacity)
    }
}

/// When a counter left at `level` needs no keeping.
fn expiry(window: &CounterWindow, level: f64, now: Instant) -> Instant {
    let rate = window.refill_per_second();
    let wait = if rate > 0.0 {
        ((window.capacity() as f64 - level).max(0.0) / rate).min(86_400.0 * 365.0)
    } else {
        window.idle().as_secs_f64()
    };
    now + Duration::from_secs_f64(wait)
}

/// Counters of this process.
#[derive(Debug, Default)]
pub struct InProcessCounters {
    counters: Mutex<HashMap<String, Counter>>,
}

impl InProcessCounters {
    pub fn new() -> InProcessCounters {
        InProcessCounters::default()
    }

    /// Each change is one small map update: a panic elsewhere cannot leave a
    /// half-made one, so a poisoned lock is still usable.
    fn map(&self) -> MutexGuard<'_, HashMap<String, Counter>> {
        self.counters.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`GovernanceCounters::take`] at a given instant.
    pub fn take_at(&self, takes: &[CounterTake], now: Instant) -> CounterVerdict {
        let mut map = self.map();
        if map.len() >= SWEEP_AT {
            map.retain(|_, c| c.expires > now);
        }
        let mut levels = Vec::with_capacity(takes.len());
        for (index, take) in takes.iter().enumerate() {
            let level = map
                .get(&take.key)
                .map_or(take.window.capacity() as f64, |c| {
                    c.level_at(&take.window, now)
                });
            if level < take.amount as f64 {
                return CounterVerdict::Refused {
                    index,
                    remaining: level.max(0.0).floor() as u64,
                };
            }
            levels.push(level);
        }
        for (take, level) in takes.iter().zip(levels) {
            let left = level - take.amount as f64;
            map.insert(
                take.key.clone(),
                Counter {
                    level: left,
                    at: now,
                    expires: expiry(&take.window, left, now),
                },
            );
        }
        CounterVerdict::Allowed
    }
}

#[async_trait::async_trait]
impl GovernanceCounters for InProcessCounters {
    async fn take(&self, takes: &[CounterTake]) -> Result<CounterVerdict, CounterError> {
        Ok(self.take_at(takes, Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rolling(key: &str, capacity: u64, per_minute: u64) -> CounterTake {
        CounterTake {
            key: key.into(),
            amount: 1,
            window: CounterWindow::Rolling {
                capacity,
                per_minute,
            },
        }
    }

    #[test]
    fn a_rolling_window_allows_its_burst_then_refills() {
        let c = InProcessCounters::new();
        let t0 = Instant::now();
        let take = [rolling("k", 2, 6)];
        assert_eq!(c.take_at(&take, t0), CounterVerdict::Allowed);
        assert_eq!(c.take_at(&take, t0), CounterVerdict::Allowed);
        assert_eq!(
            c.take_at(&take, t0),
            CounterVerdict::Refused {
                index: 0,
                remaining: 0
            }
        );
        // 6 a minute: one every 10 s.
        assert!(matches!(
            c.take_at(&take, t0 + Duration::from_secs(9)),
            CounterVerdict::Refused { .. }
        ));
        assert_eq!(
            c.take_at(&take, t0 + Duration::from_secs(10)),
            CounterVerdict::Allowed
        );
    }

    #[test]
    fn a_refusal_takes_from_no_counter() {
        let c = InProcessCounters::new();
        let t0 = Instant::now();
        let both = [rolling("a", 5, 5), rolling("b", 1, 1)];
        assert_eq!(c.take_at(&both, t0), CounterVerdict::Allowed);
        assert_eq!(
            c.take_at(&both, t0),
            CounterVerdict::Refused {
                index: 1,
                remaining: 0
            }
        );
        // "a" lost only the first call's unit.
        let a = [CounterTake {
            amount: 4,
            ..rolling("a", 5, 5)
        }];
        assert_eq!(c.take_at(&a, t0), CounterVerdict::Allowed);
    }

    #[test]
    fn a_total_never_refills_until_forgotten() {
        let c = InProcessCounters::new();
        let t0 = Instant::now();
        let take = [CounterTake {
            key: "budget".into(),
            amount: 3,
            window: CounterWindow::Total {
                limit: 5,
                idle: Duration::from_secs(3600),
            },
        }];
        assert_eq!(c.take_at(&take, t0), CounterVerdict::Allowed);
        let later = t0 + Duration::from_secs(3000);
        assert_eq!(
            c.take_at(&take, later),
            CounterVerdict::Refused {
                index: 0,
                remaining: 2
            }
        );
        // An hour after the last take it is forgotten.
        assert_eq!(
            c.take_at(&take, t0 + Duration::from_secs(3601)),
            CounterVerdict::Allowed
        );
    }
}

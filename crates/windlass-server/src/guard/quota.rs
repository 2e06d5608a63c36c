//! The in-process [`QuotaCounter`]: token buckets in a map, for a single
//! server (replicas share counters through the Postgres implementation).
//!
//! A bucket holds at most `limit` units and refills at `limit` per minute.
//! A request takes one unit from each requests bucket; the tokens bucket
//! must not be in debt (level above zero) to admit, and usage is charged
//! after the response, possibly below zero.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use windlass_engine::{
    QuotaCounter, QuotaError, QuotaKind, QuotaLimits, QuotaSubject, QuotaVerdict,
};

const MINUTE: f64 = 60.0;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: f64,
    at: Instant,
}

impl Bucket {
    fn full(limit: u64, now: Instant) -> Bucket {
        Bucket {
            level: limit as f64,
            at: now,
        }
    }

    /// Refills up to `limit` for the time since the last look.
    fn refill(&mut self, limit: u64, now: Instant) {
        let rate = limit as f64 / MINUTE;
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + elapsed * rate).min(limit as f64);
        self.at = now;
    }

    /// Seconds until the level reaches `need` (whole, at least one).
    fn wait_for(&self, need: f64, limit: u64) -> Duration {
        let rate = limit as f64 / MINUTE;
        let secs = if rate > 0.0 {
            ((need - self.level) / rate).ceil()
        } else {
            MINUTE
        };
        Duration::from_secs(secs.clamp(1.0, 24.0 * 3600.0) as u64)
    }
}

/// Counters of this process.
#[derive(Debug, Default)]
pub struct InProcessQuota {
    buckets: Mutex<HashMap<(QuotaSubject, QuotaKind), Bucket>>,
}

impl InProcessQuota {
    pub fn new() -> InProcessQuota {
        InProcessQuota::default()
    }

    /// Each change is one small map update: a panic elsewhere cannot leave a
    /// half-made one, so a poisoned lock is still usable.
    fn map(&self) -> MutexGuard<'_, HashMap<(QuotaSubject, QuotaKind), Bucket>> {
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`QuotaCounter::admit`] at a given instant.
    pub fn admit_at(&self, subjects: &[(QuotaSubject, QuotaLimits)], now: Instant) -> QuotaVerdict {
        let mut map = self.map();
        // First look at every bucket; take only when all allow.
        for (subject, limits) in subjects {
            let checks = [
                (QuotaKind::Requests, limits.requests_per_minute, 1.0),
                // Not in debt: any positive level admits.
                (
                    QuotaKind::Tokens,
                    limits.tokens_per_minute,
                    f64::MIN_POSITIVE,
                ),
            ];
            for (kind, limit, need) in checks {
                let Some(limit) = limit else { continue };
                let bucket = map
                    .entry((subject.clone(), kind))
                    .or_insert_with(|| Bucket::full(limit, now));
                bucket.refill(limit, now);
                if bucket.level < need {
                    return QuotaVerdict::Refused {
                        subject: subject.clone(),
                        kind,
                        limit,
                        retry_after: bucket.wait_for(need.max(1.0).min(limit as f64), limit),
                    };
                }
            }
        }
        for (subject, limits) in subjects {
            if limits.requests_per_minute.is_some() {
                if let Some(b) = map.get_mut(&(subject.clone(), QuotaKind::Requests)) {
                    b.level -= 1.0;
                }
            }
        }
        QuotaVerdict::Allowed
    }

    /// [`QuotaCounter::charge`] at a given instant.
    pub fn charge_at(&self, subjects: &[(QuotaSubject, QuotaLimits)], tokens: u64, now: Instant) {
        let mut map = self.map();
        for (subject, limits) in subjects {
            let Some(limit) = limits.tokens_per_minute else {
                continue;
            };
            let bucket = map
                .entry((subject.clone(), QuotaKind::Tokens))
                .or_insert_with(|| Bucket::full(limit, now));
            bucket.refill(limit, now);
            bucket.level -= tokens as f64;
        }
    }
}

#[async_trait::async_trait]
impl QuotaCounter for InProcessQuota {
    async fn admit(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
    ) -> Result<QuotaVerdict, QuotaError> {
        Ok(self.admit_at(subjects, Instant::now()))
    }

    async fn charge(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
        tokens: u64,
    ) -> Result<(), QuotaError> {
        self.charge_at(subjects, tokens, Instant::now());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rpm: Option<u64>, tpm: Option<u64>) -> QuotaLimits {
        QuotaLimits {
            requests_per_minute: rpm,
            tokens_per_minute: tpm,
        }
    }

    #[test]
    fn requests_refill_at_the_per_minute_rate() {
        let q = InProcessQuota::new();
        let t0 = Instant::now();
        let s = [(QuotaSubject::key("k"), limits(Some(2), None))];
        assert_eq!(q.admit_at(&s, t0), QuotaVerdict::Allowed);
        assert_eq!(q.admit_at(&s, t0), QuotaVerdict::Allowed);
        match q.admit_at(&s, t0) {
            QuotaVerdict::Refused {
                kind, retry_after, ..
            } => {
                assert_eq!(kind, QuotaKind::Requests);
                // 2 per minute: one unit every 30 s.
                assert_eq!(retry_after, Duration::from_secs(30));
            }
            other => panic!("{other:?}"),
        }
        let later = t0 + Duration::from_secs(30);
        assert_eq!(q.admit_at(&s, later), QuotaVerdict::Allowed);
    }

    #[test]
    fn token_debt_refuses_the_next_request() {
        let q = InProcessQuota::new();
        let t0 = Instant::now();
        let s = [(QuotaSubject::tenant("t"), limits(None, Some(600)))];
        assert_eq!(q.admit_at(&s, t0), QuotaVerdict::Allowed);
        q.charge_at(&s, 700, t0);
        match q.admit_at(&s, t0) {
            QuotaVerdict::Refused {
                kind, retry_after, ..
            } => {
                assert_eq!(kind, QuotaKind::Tokens);
                // 100 tokens of debt at 10 per second, plus one to be positive.
                assert_eq!(retry_after, Duration::from_secs(11));
            }
            other => panic!("{other:?}"),
        }
        let later = t0 + Duration::from_secs(11);
        assert_eq!(q.admit_at(&s, later), QuotaVerdict::Allowed);
    }

    #[test]
    fn a_refusal_takes_from_no_subject() {
        let q = InProcessQuota::new();
        let t0 = Instant::now();
        let key = (QuotaSubject::key("k"), limits(Some(5), None));
        let tenant = (QuotaSubject::tenant("t"), limits(Some(1), None));
        let both = [key.clone(), tenant];
        assert_eq!(q.admit_at(&both, t0), QuotaVerdict::Allowed);
        assert!(matches!(
            q.admit_at(&both, t0),
            QuotaVerdict::Refused { .. }
        ));
        // The key alone had 5: one taken, the refused request took none.
        for _ in 0..4 {
            assert_eq!(
                q.admit_at(std::slice::from_ref(&key), t0),
                QuotaVerdict::Allowed
            );
        }
        assert!(matches!(
            q.admit_at(std::slice::from_ref(&key), t0),
            QuotaVerdict::Refused { .. }
        ));
    }
}

//! When and how long to wait before re-sending a request that got no answer.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use reqwest::header::HeaderMap;
use windlass_engine::{ProviderError, TimeoutPhase};

/// First backoff step; doubles per attempt.
const BASE_DELAY: Duration = Duration::from_millis(100);
/// Longest backoff step, so many retries never wait minutes.
const MAX_DELAY: Duration = Duration::from_secs(5);
/// Longest `Retry-After` honoured; a server asking for more is overloaded
/// for longer than a client should hang, so the error is returned instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);

/// Statuses that mean "not now" rather than "not this request" (529 is
/// Anthropic's "overloaded").
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504 | 529)
}

/// Transport failures that happened before the upstream could start work.
pub(crate) fn retryable_error(e: &ProviderError) -> bool {
    matches!(
        e,
        ProviderError::Connect(_) | ProviderError::Timeout(TimeoutPhase::Connect)
    )
}

/// Exponential backoff with up to 50 % jitter, so clients that failed
/// together do not come back together.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let step = BASE_DELAY
        .saturating_mul(1u32 << attempt.min(16))
        .min(MAX_DELAY);
    let jitter_ms = (step.as_millis() as u64 / 2).max(1);
    step + Duration::from_millis(random() % jitter_ms)
}

/// What the server's `Retry-After` asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RetryAfter {
    /// No usable hint: use the backoff.
    Absent,
    /// Wait this long.
    Wait(Duration),
    /// Longer than we are willing to wait: give up now.
    TooLong,
}

/// Reads `retry-after-ms` (OpenAI) or `retry-after` in seconds. HTTP dates
/// are treated as absent.
pub(crate) fn retry_after(headers: &HeaderMap) -> RetryAfter {
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let wait = match (value("retry-after-ms"), value("retry-after")) {
        (Some(ms), _) => Duration::from_secs_f64(ms / 1000.0),
        (None, Some(s)) if s <= MAX_RETRY_AFTER.as_secs_f64() => Duration::from_secs_f64(s),
        (None, Some(_)) => return RetryAfter::TooLong,
        (None, None) => return RetryAfter::Absent,
    };
    if wait > MAX_RETRY_AFTER {
        RetryAfter::TooLong
    } else {
        RetryAfter::Wait(wait)
    }
}

/// A cheap random number: jitter needs spread, not quality, and a hasher
/// seeded per call by the standard library avoids a dependency.
fn random() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        for _ in 0..50 {
            let first = backoff(0);
            assert!(first >= Duration::from_millis(100) && first < Duration::from_millis(150));
            let second = backoff(1);
            assert!(second >= Duration::from_millis(200) && second < Duration::from_millis(300));
        }
        assert!(backoff(40) < MAX_DELAY * 2);
    }

    #[test]
    fn retryable_statuses() {
        for s in [429, 502, 503, 504, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 404, 500, 501] {
            assert!(!retryable_status(s), "{s}");
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after(&headers(&[])), RetryAfter::Absent);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1")])),
            RetryAfter::Wait(Duration::from_secs(1))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250"), ("retry-after", "1")])),
            RetryAfter::Wait(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "120")])),
            RetryAfter::TooLong
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            RetryAfter::Absent
        );
    }
}

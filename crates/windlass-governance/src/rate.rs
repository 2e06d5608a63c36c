//! Rate limits per API key and per key and tool: GCRA (a sliding window
//! with burst) from `governor`, one limiter set per key, built on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::{RateLimit, Rules};

struct KeyLimits {
    all: Option<(RateLimit, DefaultDirectRateLimiter)>,
    per_tool: Option<(RateLimit, DefaultKeyedRateLimiter<String>)>,
}

fn quota(limit: RateLimit) -> Quota {
    Quota::per_minute(limit.per_minute).allow_burst(limit.burst.unwrap_or(limit.per_minute))
}

fn describe(limit: RateLimit) -> String {
    format!(
        "{} calls per minute, bursts of {}",
        limit.per_minute,
        limit.burst.unwrap_or(limit.per_minute)
    )
}

/// Which limit a call hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    pub rule: &'static str,
    pub message: String,
}

#[derive(Default)]
pub struct Limiters {
    by_key: Mutex<HashMap<String, Arc<KeyLimits>>>,
}

impl Limiters {
    /// Takes one call from `principal`'s allowance for `tool`. Keys share
    /// nothing; calls without a principal share the anonymous allowance.
    pub fn check(&self, principal: Option<&str>, rules: &Rules, tool: &str) -> Result<(), Limited> {
        let key = principal.unwrap_or("");
        let limits = self
            .by_key
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.to_owned())
            .or_insert_with(|| {
                Arc::new(KeyLimits {
                    all: rules.rate_limit.map(|l| (l, RateLimiter::direct(quota(l)))),
                    per_tool: rules
                        .tool_rate_limit
                        .map(|l| (l, RateLimiter::keyed(quota(l)))),
                })
            })
            .clone();
        // The per-tool limit is checked first so a call refused there does
        // not also spend the key's overall allowance.
        if let Some((limit, lim)) = &limits.per_tool {
            if lim.check_key(&tool.to_owned()).is_err() {
                return Err(Limited {
                    rule: "rate_limit.tool",
                    message: format!(
                        "rate limit for tool '{tool}' reached ({}); try again later",
                        describe(*limit)
                    ),
                });
            }
        }
        if let Some((limit, lim)) = &limits.all {
            if lim.check().is_err() {
                return Err(Limited {
                    rule: "rate_limit.key",
                    message: format!(
                        "rate limit for this API key reached ({}); try again later",
                        describe(*limit)
                    ),
                });
            }
        }
        Ok(())
    }
}

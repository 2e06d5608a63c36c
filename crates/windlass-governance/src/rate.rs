//! Rate limits per API key and per key and tool, as counter takes: a
//! rolling window per limit (`burst` at once, refilled at `per_minute`),
//! counted by the gate's [`GovernanceCounters`](windlass_engine::GovernanceCounters)
//! (in the process, or shared by replicas).

use windlass_engine::{CounterTake, CounterWindow};

use crate::config::{RateLimit, Rules};

fn window(limit: RateLimit) -> CounterWindow {
    let per_minute = u64::from(limit.per_minute.get());
    CounterWindow::Rolling {
        capacity: limit.burst.map_or(per_minute, |b| u64::from(b.get())),
        per_minute,
    }
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

/// One take and what to say when it is refused.
pub struct RateTake {
    pub take: CounterTake,
    pub limited: Limited,
}

/// The takes one call of `tool` by `principal` needs: the per-tool limit
/// first (the refusal named when both are spent), then the key's. Keys
/// share nothing; calls without a principal share the anonymous allowance.
pub fn takes(principal: Option<&str>, rules: &Rules, tool: &str) -> Vec<RateTake> {
    let key = principal.unwrap_or("");
    let mut out = Vec::new();
    if let Some(limit) = rules.tool_rate_limit {
        out.push(RateTake {
            // The key's length keeps "a:b" + "c" apart from "a" + "b:c".
            take: CounterTake {
                key: format!("rate:tool:{}:{key}:{tool}", key.len()),
                amount: 1,
                window: window(limit),
            },
            limited: Limited {
                rule: "rate_limit.tool",
                message: format!(
                    "rate limit for tool '{tool}' reached ({}); try again later",
                    describe(limit)
                ),
            },
        });
    }
    if let Some(limit) = rules.rate_limit {
        out.push(RateTake {
            take: CounterTake {
                key: format!("rate:key:{key}"),
                amount: 1,
                window: window(limit),
            },
            limited: Limited {
                rule: "rate_limit.key",
                message: format!(
                    "rate limit for this API key reached ({}); try again later",
                    describe(limit)
                ),
            },
        });
    }
    out
}

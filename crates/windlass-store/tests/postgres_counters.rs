//! Governance counters shared by replicas: two stores (two replicas' pools)
//! on one Postgres database enforce one limit, not two; and the governance
//! gate built on them (`Governance::with_counters`) does the same. Skipped
//! when `WINDLASS_TEST_PG` is unset; `scripts/postgres.sh` sets it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
#![cfg(feature = "postgres")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::pg_schema_url;
use serde_json::{json, Map};
use windlass_engine::{
    CallDecision, CounterTake, CounterVerdict, CounterWindow, GovernanceCounters, Policy,
    PolicyContext, ToolCall, ToolDefinition, ToolOrigin,
};
use windlass_governance::{Governance, GovernanceConfig};
use windlass_store::PgStore;

async fn two_replicas() -> Option<(PgStore, PgStore)> {
    let url = pg_schema_url().await?;
    let a = PgStore::open(&url).await.expect("open a");
    let b = PgStore::open(&url).await.expect("open b");
    Some((a, b))
}

fn rolling(key: &str, capacity: u64) -> CounterTake {
    CounterTake {
        key: key.into(),
        amount: 1,
        // One unit a minute: nothing refills while the test runs.
        window: CounterWindow::Rolling {
            capacity,
            per_minute: 1,
        },
    }
}

/// 40 takes at once, half through each replica, against a limit of 10:
/// exactly 10 are allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_enforce_one_limit() {
    let Some((a, b)) = two_replicas().await else {
        return;
    };
    let counters: [Arc<dyn GovernanceCounters>; 2] =
        [Arc::new(a.counters()), Arc::new(b.counters())];
    let tasks = (0..40).map(|k| {
        let c = counters[k % 2].clone();
        tokio::spawn(async move { c.take(&[rolling("rate:key:alice", 10)]).await })
    });
    let mut allowed = 0;
    for t in tasks {
        if t.await.unwrap().expect("take") == CounterVerdict::Allowed {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 10, "one limit of 10 across both replicas");
    // Another key has its own counter.
    assert_eq!(
        counters[1]
            .take(&[rolling("rate:key:bob", 10)])
            .await
            .unwrap(),
        CounterVerdict::Allowed
    );
}

/// All or nothing, and the refusal says which take and what was left.
#[tokio::test]
async fn a_refused_take_changes_nothing() {
    let Some((a, b)) = two_replicas().await else {
        return;
    };
    let (a, b) = (a.counters(), b.counters());
    let budget = |amount| CounterTake {
        key: "budget:resp_1:files_read".into(),
        amount,
        window: CounterWindow::Total {
            limit: 5,
            idle: Duration::from_secs(3600),
        },
    };
    assert_eq!(a.take(&[budget(3)]).await.unwrap(), CounterVerdict::Allowed);
    let both = [rolling("rate:key:carol", 4), budget(3)];
    assert_eq!(
        b.take(&both).await.unwrap(),
        CounterVerdict::Refused {
            index: 1,
            remaining: 2
        }
    );
    // The rate counter was not spent by the refused call: 4 still fit.
    for _ in 0..4 {
        assert_eq!(
            a.take(&[rolling("rate:key:carol", 4)]).await.unwrap(),
            CounterVerdict::Allowed
        );
    }
    assert!(matches!(
        b.take(&[rolling("rate:key:carol", 4)]).await.unwrap(),
        CounterVerdict::Refused {
            index: 0,
            remaining: 0
        }
    ));
    assert_eq!(b.take(&[budget(2)]).await.unwrap(), CounterVerdict::Allowed);
}

/// The gate on two replicas: a per-key tool limit of 3 is 3, not 6.
#[tokio::test]
async fn the_governance_gate_counts_once_across_replicas() {
    let Some((a, b)) = two_replicas().await else {
        return;
    };
    let config = |counters: Arc<dyn GovernanceCounters>| {
        let config: GovernanceConfig =
            toml::from_str("tool_rate_limit = { per_minute = 1, burst = 3 }").unwrap();
        Governance::with_counters(config, counters).unwrap()
    };
    let gates = [
        config(Arc::new(a.counters())),
        config(Arc::new(b.counters())),
    ];
    let tool = ToolDefinition {
        name: "docs__search".into(),
        description: None,
        parameters: json!({}),
        strict: None,
        origin: ToolOrigin::Mcp {
            server_label: "docs".into(),
            name: "search".into(),
        },
    };
    let metadata = Map::new();
    let mut decisions = Vec::new();
    for k in 0..8 {
        let ctx = PolicyContext {
            response_id: "resp_1",
            model: "m",
            turn: 1,
            principal: Some("alice"),
            metadata: &metadata,
            approved: false,
        };
        let call = ToolCall {
            call_id: format!("call_{k}"),
            name: tool.name.clone(),
            arguments: "{}".into(),
        };
        decisions.push(gates[k % 2].before_call(&ctx, &call, Some(&tool)).await);
    }
    let allowed = decisions
        .iter()
        .filter(|d| **d == CallDecision::Allow)
        .count();
    assert_eq!(allowed, 3, "{decisions:?}");
    match &decisions[7] {
        CallDecision::Deny { reason } => {
            assert!(
                reason.contains("rate limit for tool 'docs__search'"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
}

//! The governance gate as the engine consults it: config, autonomy levels,
//! scopes per key, rate limits, budgets, path/domain/command rules.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::*;
use std::sync::Arc;

use serde_json::{json, Map};
use windlass_engine::CallDecision;
use windlass_governance::{Governance, GovernanceConfig, ToolHints};

#[test]
fn config_parses_with_keys_and_refuses_unknown_fields() {
    let c: GovernanceConfig = toml::from_str(
        r#"
        autonomy = "supervised"
        commands = ["ls"]
        rate_limit = { per_minute = 10, burst = 2 }
        budgets = { files_read = 3 }
        [keys.ci]
        autonomy = "read_only"
        budgets = { commands_run = 1 }
        [webhook]
        url = "http://127.0.0.1:9/x"
        "#,
    )
    .unwrap();
    let ci = c.rules_for(Some("ci"));
    assert_eq!(ci.autonomy, Some(windlass_governance::Autonomy::ReadOnly));
    assert_eq!(ci.commands.as_deref(), Some(&["ls".to_owned()][..]));
    assert_eq!(ci.budgets.files_read, Some(3));
    assert_eq!(ci.budgets.commands_run, Some(1));
    assert_eq!(
        c.rules_for(Some("other")).autonomy,
        Some(windlass_governance::Autonomy::Supervised)
    );
    assert!(toml::from_str::<GovernanceConfig>("autonomy = \"yolo\"").is_err());
    assert!(toml::from_str::<GovernanceConfig>("comands = [\"ls\"]").is_err());
    let bad: GovernanceConfig = toml::from_str("[webhook]\nurl = \"ftp://x\"").unwrap();
    assert!(Governance::new(bad).is_err());
}

#[tokio::test]
async fn read_only_refuses_writes_and_commands() {
    let g = gov("autonomy = \"read_only\"");
    let a = Ask::default();
    let d = ask(
        &g,
        &builtin("write_file"),
        json!({"path": "a", "content": "x"}),
        &a,
    )
    .await;
    assert!(denied(&d).contains("read-only"));
    assert!(matches!(
        ask(&g, &builtin("shell"), json!({"command": "ls"}), &a).await,
        CallDecision::Deny { .. }
    ));
    assert_eq!(
        ask(&g, &builtin("read_file"), json!({"path": "a"}), &a).await,
        CallDecision::Allow
    );
    assert_eq!(
        ask(
            &g,
            &builtin("web_fetch"),
            json!({"url": "https://example.com"}),
            &a
        )
        .await,
        CallDecision::Allow
    );
    // Other MCP servers: read-only only when their listing says so.
    struct Hints;
    impl ToolHints for Hints {
        fn read_only(&self, _label: &str, tool: &str) -> Option<bool> {
            Some(tool == "get")
        }
    }
    let g = gov("autonomy = \"read_only\"").with_hints(Arc::new(Hints));
    assert_eq!(
        ask(&g, &mcp("kv", "get"), json!({}), &a).await,
        CallDecision::Allow
    );
    assert!(matches!(
        ask(&g, &mcp("kv", "put"), json!({}), &a).await,
        CallDecision::Deny { .. }
    ));
}

#[tokio::test]
async fn supervised_asks_for_approval_then_runs_the_approved_call() {
    let g = gov("autonomy = \"supervised\"\nbudgets = { commands_run = 1 }");
    let shell = builtin("shell");
    let args = json!({"command": "ls"});
    assert_eq!(
        ask(&g, &shell, args.clone(), &Ask::default()).await,
        CallDecision::RequireApproval
    );
    // Asking spent nothing: the approved call still fits the budget of one.
    let approved = Ask {
        approved: true,
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &shell, args.clone(), &approved).await,
        CallDecision::Allow
    );
    assert!(denied(&ask(&g, &shell, args, &approved).await).contains("commands_run"));
    // Reads need no approval.
    assert_eq!(
        ask(
            &g,
            &builtin("read_file"),
            json!({"path": "a"}),
            &Ask::default()
        )
        .await,
        CallDecision::Allow
    );
}

#[tokio::test]
async fn keys_get_their_own_rules_and_scopes() {
    let g = gov(r#"
        [keys.reader]
        autonomy = "read_only"
        tools = ["windlass/read_file", "calc"]
        "#);
    let reader = Ask {
        principal: Some("reader"),
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &builtin("read_file"), json!({"path": "a"}), &reader).await,
        CallDecision::Allow
    );
    assert!(
        denied(&ask(&g, &builtin("list_dir"), json!({}), &reader).await).contains("may not use")
    );
    assert!(denied(&ask(&g, &mcp("other", "x"), json!({}), &reader).await).contains("may not use"));
    // The default rules (full autonomy, every tool) for anyone else.
    assert_eq!(
        ask(
            &g,
            &builtin("write_file"),
            json!({"path": "a", "content": ""}),
            &Ask::default()
        )
        .await,
        CallDecision::Allow
    );
}

#[tokio::test]
async fn rate_limits_deny_per_key_and_tool() {
    let g = gov(r#"
        tool_rate_limit = { per_minute = 1, burst = 2 }
        [keys.slow]
        rate_limit = { per_minute = 1, burst = 1 }
        "#);
    let a = Ask::default();
    let read = builtin("read_file");
    let args = json!({"path": "a"});
    assert_eq!(ask(&g, &read, args.clone(), &a).await, CallDecision::Allow);
    assert_eq!(ask(&g, &read, args.clone(), &a).await, CallDecision::Allow);
    assert!(denied(&ask(&g, &read, args.clone(), &a).await).contains("rate limit for tool"));
    // Another tool has its own allowance.
    assert_eq!(
        ask(&g, &builtin("list_dir"), json!({}), &a).await,
        CallDecision::Allow
    );
    // Another key has its own allowance too, with its own overall limit.
    let slow = Ask {
        principal: Some("slow"),
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &read, args.clone(), &slow).await,
        CallDecision::Allow
    );
    assert!(
        denied(&ask(&g, &builtin("list_dir"), json!({}), &slow).await).contains("this API key")
    );
}

#[tokio::test]
async fn budgets_come_from_config_and_metadata_only_lowers_them() {
    let g = gov("budgets = { files_read = 2, lines_changed = 3 }");
    let read = builtin("read_file");
    let args = json!({"path": "a"});
    let mut meta = Map::new();
    meta.insert("budget.files_read".into(), json!("1"));
    let lowered = Ask {
        metadata: meta,
        response: "resp_low",
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &read, args.clone(), &lowered).await,
        CallDecision::Allow
    );
    assert!(denied(&ask(&g, &read, args.clone(), &lowered).await).contains("files_read"));
    let mut meta = Map::new();
    meta.insert("budget.files_read".into(), json!("50"));
    let raised = Ask {
        metadata: meta,
        response: "resp_high",
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &read, args.clone(), &raised).await,
        CallDecision::Allow
    );
    assert_eq!(
        ask(&g, &read, args.clone(), &raised).await,
        CallDecision::Allow
    );
    assert!(denied(&ask(&g, &read, args.clone(), &raised).await).contains("files_read"));
    // Lines: a four-line write does not fit three.
    let w = builtin("write_file");
    let fresh = Ask {
        response: "resp_lines",
        ..Ask::default()
    };
    assert!(denied(
        &ask(
            &g,
            &w,
            json!({"path": "a", "content": "1\n2\n3\n4\n"}),
            &fresh
        )
        .await
    )
    .contains("lines_changed"));
    assert_eq!(
        ask(&g, &w, json!({"path": "a", "content": "1\n2\n"}), &fresh).await,
        CallDecision::Allow
    );
    // Metadata can also set a budget the config leaves open.
    let mut meta = Map::new();
    meta.insert("budget.commands_run".into(), json!(0));
    let none = Ask {
        metadata: meta,
        response: "resp_cmd",
        ..Ask::default()
    };
    assert!(
        denied(&ask(&g, &builtin("shell"), json!({"command": "ls"}), &none).await)
            .contains("commands_run")
    );
    let mut meta = Map::new();
    meta.insert("budget.commands_run".into(), json!("lots"));
    let bad = Ask {
        metadata: meta,
        response: "resp_bad",
        ..Ask::default()
    };
    assert!(
        denied(&ask(&g, &builtin("shell"), json!({"command": "ls"}), &bad).await)
            .contains("whole number")
    );
}

#[tokio::test]
async fn paths_domains_and_commands_are_checked() {
    let g = gov(r#"
        commands = ["ls", "wc"]
        paths = ["/work/docs"]
        domains = ["example.com", "*.rust-lang.org"]
        "#);
    let a = Ask::default();
    assert_eq!(
        ask(&g, &builtin("read_file"), json!({"path": "docs/a.md"}), &a).await,
        CallDecision::Allow
    );
    assert!(
        denied(&ask(&g, &builtin("read_file"), json!({"path": "src/a.rs"}), &a).await)
            .contains("outside")
    );
    assert!(denied(
        &ask(
            &g,
            &builtin("write_file"),
            json!({"path": "/etc/x", "content": ""}),
            &a
        )
        .await
    )
    .contains("outside"));
    assert!(denied(
        &ask(
            &g,
            &builtin("read_file"),
            json!({"path": "docs/../../etc/passwd"}),
            &a
        )
        .await
    )
    .contains("outside"));
    let fetch = builtin("web_fetch");
    assert_eq!(
        ask(
            &g,
            &fetch,
            json!({"url": "https://doc.rust-lang.org/std"}),
            &a
        )
        .await,
        CallDecision::Allow
    );
    assert_eq!(
        ask(&g, &fetch, json!({"url": "https://EXAMPLE.com/"}), &a).await,
        CallDecision::Allow
    );
    assert!(
        denied(&ask(&g, &fetch, json!({"url": "https://example.org/"}), &a).await)
            .contains("allowlist")
    );
    assert!(denied(
        &ask(
            &g,
            &fetch,
            json!({"url": "https://rust-lang.org.evil.com/"}),
            &a
        )
        .await
    )
    .contains("allowlist"));
    assert_eq!(
        ask(
            &g,
            &builtin("shell"),
            json!({"command": "wc -l docs/a.md"}),
            &a
        )
        .await,
        CallDecision::Allow
    );
    assert!(denied(
        &ask(
            &g,
            &builtin("shell"),
            json!({"command": "ls; cat /etc/passwd"}),
            &a
        )
        .await
    )
    .contains("'cat'"));
    assert!(
        denied(&ask(&g, &builtin("shell"), json!({"command": "ls > /tmp/x"}), &a).await)
            .contains("redirection")
    );
}

/// Counters that cannot be reached (a shared database down) refuse the
/// call rather than let it run uncounted.
#[tokio::test]
async fn unreachable_counters_refuse_the_call() {
    struct Down;
    #[async_trait::async_trait]
    impl windlass_engine::GovernanceCounters for Down {
        async fn take(
            &self,
            _takes: &[windlass_engine::CounterTake],
        ) -> Result<windlass_engine::CounterVerdict, windlass_engine::CounterError> {
            Err(windlass_engine::CounterError("connection refused".into()))
        }
    }
    let config: GovernanceConfig = toml::from_str("rate_limit = { per_minute = 10 }").unwrap();
    let g = Governance::with_counters(config, Arc::new(Down)).unwrap();
    let d = ask(
        &g,
        &builtin("list_dir"),
        json!({"path": "."}),
        &Ask::default(),
    )
    .await;
    let reason = denied(&d);
    assert!(reason.contains("governance rule: counters"), "{reason}");
    assert!(!reason.contains("connection refused"), "{reason}");
    // Without any limit or budget there is nothing to count: allowed.
    let free = Governance::with_counters(GovernanceConfig::default(), Arc::new(Down)).unwrap();
    let d = ask(
        &free,
        &builtin("list_dir"),
        json!({"path": "."}),
        &Ask::default(),
    )
    .await;
    assert_eq!(d, CallDecision::Allow);
}

//! The governance gate as the engine consults it: real config, real
//! decisions, a real local webhook server.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use windlass_engine::{CallDecision, Policy, PolicyContext, ToolCall, ToolDefinition, ToolOrigin};
use windlass_governance::paths::Areas;
use windlass_governance::shell::validate;
use windlass_governance::{Governance, GovernanceConfig, ToolHints};

fn gov(toml_text: &str) -> Governance {
    let config: GovernanceConfig = toml::from_str(toml_text).unwrap();
    Governance::new(config)
        .unwrap()
        .with_workspace(Some("/work".into()), vec!["/work".into()])
}

fn builtin(tool: &str) -> ToolDefinition {
    mcp("windlass", tool)
}

fn mcp(label: &str, tool: &str) -> ToolDefinition {
    ToolDefinition {
        name: format!("{label}__{tool}"),
        description: None,
        parameters: json!({}),
        strict: None,
        origin: ToolOrigin::Mcp {
            server_label: label.to_owned(),
            name: tool.to_owned(),
        },
    }
}

struct Ask<'a> {
    principal: Option<&'a str>,
    metadata: Map<String, Value>,
    approved: bool,
    response: &'a str,
}

impl Default for Ask<'_> {
    fn default() -> Self {
        Ask {
            principal: None,
            metadata: Map::new(),
            approved: false,
            response: "resp_1",
        }
    }
}

async fn ask(g: &Governance, def: &ToolDefinition, args: Value, a: &Ask<'_>) -> CallDecision {
    static N: AtomicU32 = AtomicU32::new(0);
    let ctx = PolicyContext {
        response_id: a.response,
        model: "m",
        turn: 1,
        principal: a.principal,
        metadata: &a.metadata,
        approved: a.approved,
    };
    let call = ToolCall {
        call_id: format!("call_{}", N.fetch_add(1, Ordering::Relaxed)),
        name: def.name.clone(),
        arguments: args.to_string(),
    };
    g.before_call(&ctx, &call, Some(def)).await
}

fn denied(d: &CallDecision) -> String {
    match d {
        CallDecision::Deny { reason } => reason.clone(),
        other => panic!("expected a denial, got {other:?}"),
    }
}

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

#[test]
fn shell_injection_attempts_are_refused() {
    let allow: Vec<String> = ["ls", "wc", "cat", "echo", "grep", "sort"]
        .map(String::from)
        .to_vec();
    let areas = Areas::new(Some("/work".into()), vec!["/work".into()]);
    let refused = [
        "ls; rm -rf /",
        "ls && curl http://x",
        "ls || sh",
        "cat x | sh",
        "echo `id`",
        "echo $(id)",
        "echo \"$(id)\"",
        "echo \"`id`\"",
        "ls\nrm -rf /",
        "ls\rrm x",
        "(rm -rf /)",
        "ls & rm x",
        "cat <(rm x)",
        "echo x > /etc/passwd",
        "echo x >> ../outside",
        "cat < /etc/shadow",
        "echo x > ~/x",
        "echo x > $HOME/x",
        "rm -rf /",
        "/bin/rm x",
        "FOO=1 rm x",
        "ls;",
        "echo 'unterminated",
        "",
    ];
    for line in refused {
        assert!(
            validate(line, Some(&allow), &areas).is_err(),
            "{line:?} was accepted"
        );
    }
    let accepted = [
        "wc -l README.md | sort",
        "echo \"a;b && c | d\"",
        "echo 'a $(b) `c`'",
        "ls 2>/dev/null",
        "grep -c x notes.txt > counts.txt",
        "echo x >> /work/sub/log.txt",
        "ls 2>&1 | grep a",
        "LANG=C sort x",
    ];
    for line in accepted {
        assert!(
            validate(line, Some(&allow), &areas).is_ok(),
            "{line:?} was refused: {:?}",
            validate(line, Some(&allow), &areas)
        );
    }
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

/// A webhook server answering from the request's `tool`.
async fn webhook() -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/decide",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(body.clone());
                let escape = body["arguments"]["path"] == "escape";
                let answer = match body["mcp_tool"].as_str().unwrap_or("") {
                    "read_file" if escape => {
                        json!({"decision": "rewrite", "arguments": {"path": "/etc/passwd"}})
                    }
                    "read_file" => json!({"decision": "allow"}),
                    "write_file" => json!({"decision": "deny", "reason": "writes are frozen"}),
                    "list_dir" => json!({"decision": "rewrite", "arguments": {"path": "docs"}}),
                    "shell" => json!({"decision": "require_approval"}),
                    "edit_file" => {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        json!({"decision": "allow"})
                    }
                    _ => json!({"decision": "deny"}),
                };
                axum::Json(answer)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/decide"), seen)
}

#[tokio::test]
async fn the_webhook_decides_and_fails_closed() {
    let (url, seen) = webhook().await;
    let g = gov(&format!("[webhook]\nurl = \"{url}\"\ntimeout_ms = 300\n"));
    let a = Ask {
        principal: Some("team"),
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &builtin("read_file"), json!({"path": "a"}), &a).await,
        CallDecision::Allow
    );
    assert_eq!(seen.lock().unwrap()[0]["principal"], "team");
    assert_eq!(seen.lock().unwrap()[0]["arguments"], json!({"path": "a"}));
    assert_eq!(seen.lock().unwrap()[0]["effect"], "read");
    assert!(denied(
        &ask(
            &g,
            &builtin("write_file"),
            json!({"path": "a", "content": ""}),
            &a
        )
        .await
    )
    .contains("frozen"));
    assert_eq!(
        ask(&g, &builtin("list_dir"), json!({}), &a).await,
        CallDecision::AllowWithArguments(json!({"path": "docs"}).to_string())
    );
    assert_eq!(
        ask(&g, &builtin("shell"), json!({"command": "ls"}), &a).await,
        CallDecision::RequireApproval
    );
    let approved = Ask {
        approved: true,
        ..Ask::default()
    };
    assert_eq!(
        ask(&g, &builtin("shell"), json!({"command": "ls"}), &approved).await,
        CallDecision::Allow
    );
    // A rewrite must pass the same rules.
    let d = ask(&g, &builtin("read_file"), json!({"path": "escape"}), &a).await;
    assert!(denied(&d).contains("outside"), "{d:?}");
    // Too slow: denied (fail closed) ...
    let slow = ask(
        &g,
        &builtin("edit_file"),
        json!({"path": "a", "old_string": "x", "new_string": "y"}),
        &a,
    )
    .await;
    assert!(denied(&slow).contains("could not decide"));
    // ... unless the operator chose to fail open.
    let open = gov(&format!(
        "[webhook]\nurl = \"{url}\"\ntimeout_ms = 300\non_error = \"allow\"\n"
    ));
    let d = ask(
        &open,
        &builtin("edit_file"),
        json!({"path": "a", "old_string": "x", "new_string": "y"}),
        &a,
    )
    .await;
    assert_eq!(d, CallDecision::Allow);
    // Nobody listening: denied.
    let dead = gov("[webhook]\nurl = \"http://127.0.0.1:9/decide\"\ntimeout_ms = 300\n");
    assert!(
        denied(&ask(&dead, &builtin("read_file"), json!({"path": "a"}), &a).await)
            .contains("could not decide")
    );
}

//! The policy webhook against a real local HTTP server: allow, deny,
//! rewrite (checked again), require approval, and failing closed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use windlass_engine::CallDecision;

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

//! A request-declared server's `headers` and `authorization` reach the MCP
//! server on every request, and are never echoed, stored or shown.

use crate::support::*;
use serde_json::{json, Value};
use windlass_testkit::scenario::*;
use windlass_testkit::{McpFixture, PyMcp, Reply};

#[tokio::test]
async fn headers_reach_the_server_and_are_never_stored() {
    for v in [PyMcp::V2, PyMcp::V1] {
        let fx = McpFixture::python_with(v, &["--header-tool"]).await;
        for mode in MODES {
            let gw = start(loopback_config()).await;
            gw.upstream.push(Reply::tool_call("calc__headers", "{}"));
            gw.upstream.push(Reply::text("ok"));
            let tool = json!({
                "type": "mcp", "server_label": "calc", "server_url": fx.url,
                "require_approval": "never",
                "headers": {"X-Windlass-Test": "hdr-secret-1"},
                "authorization": "tok-secret-2",
            });
            let run = create(
                &gw,
                mode,
                &json!({"model": "m", "input": "who am i", "tools": [tool]}),
            )
            .await;
            assert_eq!(run.status(), "completed", "{v:?} {mode:?}: {}", run.resp);

            // What the server saw (its request headers, values reversed).
            let call = only(&run.resp, "mcp_call");
            let seen: Value = serde_json::from_str(call["output"].as_str().unwrap())
                .unwrap_or_else(|e| panic!("{v:?}: {e}: {call}"));
            let reversed = |s: &str| s.chars().rev().collect::<String>();
            assert_eq!(
                seen["x-windlass-test"],
                reversed("hdr-secret-1"),
                "{v:?}: {seen}"
            );
            assert_eq!(
                seen["authorization"],
                reversed("Bearer tok-secret-2"),
                "{v:?}: {seen}"
            );

            // The echoed tool keeps its label and URL, not its secrets.
            let echoed = &run.resp["tools"][0];
            assert_eq!(echoed["server_label"], "calc");
            assert!(echoed.get("headers").is_none_or(Value::is_null), "{echoed}");
            assert!(echoed.get("authorization").is_none_or(Value::is_null));

            // Neither the stored response nor the SQLite file holds them.
            let stored: Value = gw
                .client
                .get(gw.url(&format!("/v1/responses/{}", run.id())))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let text = stored["tools"].to_string();
            assert!(!text.contains("hdr-secret-1") && !text.contains("tok-secret-2"));
            let db = std::fs::read(&gw.db).unwrap_or_default();
            let mut wal = gw.db.clone().into_os_string();
            wal.push("-wal");
            let wal = std::fs::read(&wal).unwrap_or_default();
            for secret in [b"hdr-secret-1".as_slice(), b"tok-secret-2".as_slice()] {
                for bytes in [&db, &wal] {
                    assert!(
                        !bytes.windows(secret.len()).any(|w| w == secret),
                        "{v:?} {mode:?}: a secret was written to the database"
                    );
                }
            }
        }
    }
}

//! A configured server that says its tool list changed
//! (`notifications/tools/list_changed`) is listed again: the cached tools
//! the operator view and new requests use pick up the new tool.

use std::time::{Duration, Instant};

use crate::support::*;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpHub, McpServerRef};
use windlass_testkit::{McpFixture, PyMcp};
use windlass_tools::{McpConfig, McpServers, ServerState};

fn tool_names(hub: &McpServers) -> Vec<String> {
    hub.status()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

#[tokio::test]
async fn list_changed_relists_a_configured_server() {
    for v in [PyMcp::V2, PyMcp::V1] {
        let fx = McpFixture::python_with(v, &["--dynamic"]).await;
        let hub = McpServers::start(McpConfig {
            servers: vec![http_server("calc", &fx.url)],
            ..loopback_config()
        });
        wait_state(&hub, "calc", ServerState::Connected).await;
        let before = tool_names(&hub);
        assert!(before.contains(&"grow".to_owned()), "{v:?}: {before:?}");
        assert!(!before.contains(&"extra".to_owned()), "{v:?}: {before:?}");

        let server = McpServerRef {
            label: "calc".into(),
            url: None,
            headers: Vec::new(),
        };
        let grown = hub
            .call_tool(&server, "grow", "{}", &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert!(!grown.is_error, "{v:?}: {grown:?}");

        let deadline = Instant::now() + Duration::from_secs(15);
        while !tool_names(&hub).contains(&"extra".to_owned()) {
            assert!(
                Instant::now() < deadline,
                "{v:?}: the server said its list changed, but it was not re-listed: {:?}",
                tool_names(&hub)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // New requests see the new tool too.
        let listed = hub
            .list_tools(&server, &CancellationToken::new())
            .await
            .unwrap();
        assert!(listed.iter().any(|t| t.name == "extra"), "{v:?}");
        hub.shutdown().await;
    }
}

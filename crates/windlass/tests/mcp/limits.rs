//! What a request-declared MCP server may list: past `max_listed_tools` or
//! `max_listed_bytes` the listing fails (424 `mcp_list_tools_failed`) and
//! nothing reaches the model; within them the same server works.

use crate::support::*;
use serde_json::json;
use windlass_testkit::check;
use windlass_testkit::{McpFixture, PyMcp, Reply};
use windlass_tools::McpConfig;

async fn listing_with(fx: &McpFixture, config: McpConfig) -> (u16, serde_json::Value, usize) {
    let gw = start(config).await;
    gw.upstream.push(Reply::text("done"));
    let body = json!({"model": "m", "input": "hi", "tools": [mcp_tool("calc", &fx.url)]});
    let (status, resp) = gw.post_json("/v1/responses", &body).await;
    (status, resp, gw.upstream.request_count())
}

#[tokio::test]
async fn a_declared_server_listing_too_much_is_refused() {
    let fx = McpFixture::python(PyMcp::V2).await;
    for (config, limit) in [
        (
            McpConfig {
                max_listed_tools: 2,
                ..loopback_config()
            },
            "max_listed_tools",
        ),
        (
            McpConfig {
                max_listed_bytes: 300,
                ..loopback_config()
            },
            "max_listed_bytes",
        ),
    ] {
        let (status, resp, upstream_calls) = listing_with(&fx, config).await;
        let err = check::assert_api_error(status, &resp, 424);
        assert_eq!(err["code"], "mcp_list_tools_failed", "{resp}");
        assert!(err["message"].as_str().unwrap().contains(limit), "{resp}");
        assert_eq!(upstream_calls, 0, "the model saw nothing");
    }
    let (status, resp, _) = listing_with(&fx, loopback_config()).await;
    assert_eq!(status, 200, "{resp}");
}

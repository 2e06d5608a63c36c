//! The endpoint over streamable HTTP (rmcp's server side), a tower service
//! the gateway mounts at `/mcp` behind its key guard.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::handler::GatewayMcpServer;

/// The service to mount (`Router::route_service("/mcp", service)`).
pub type McpHttpService = StreamableHttpService<GatewayMcpServer, LocalSessionManager>;

/// How the endpoint speaks HTTP.
#[derive(Debug, Clone)]
pub struct McpEndpointOptions {
    /// `Host` values accepted (DNS-rebinding protection for a server on
    /// loopback). Empty: any host, for an endpoint behind API keys.
    pub allowed_hosts: Vec<String>,
    /// Sessions (`Mcp-Session-Id`) for protocol revisions that have them;
    /// without, every request is served on its own.
    pub sessions: bool,
    /// Plain JSON answers where no stream is needed.
    pub json_response: bool,
    /// Keep-alive comments on open SSE streams.
    pub sse_keep_alive: Option<Duration>,
    /// Ends every session (the gateway's shutdown).
    pub shutdown: CancellationToken,
}

impl Default for McpEndpointOptions {
    fn default() -> Self {
        McpEndpointOptions {
            allowed_hosts: Vec::new(),
            sessions: true,
            json_response: false,
            sse_keep_alive: Some(Duration::from_secs(15)),
            shutdown: CancellationToken::new(),
        }
    }
}

/// The streamable-HTTP service over `server`: each session gets its own
/// handler ([`GatewayMcpServer::new_session`]) over the same hub and gate.
pub fn mcp_http_service(server: GatewayMcpServer, options: McpEndpointOptions) -> McpHttpService {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts)
        .with_legacy_session_mode(options.sessions)
        .with_json_response(options.json_response)
        .with_sse_keep_alive(options.sse_keep_alive)
        .with_cancellation_token(options.shutdown);
    let template = Arc::new(server);
    StreamableHttpService::new(
        move || Ok(template.new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

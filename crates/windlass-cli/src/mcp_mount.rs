//! `/mcp`: the gateway's MCP servers and built-ins as one governed MCP
//! server (streamable HTTP, `windlass_tools::mcp_server`), mounted behind
//! the API's key guard whenever keys (static or `[auth.oidc]`) are
//! configured. The caller is the request's key: its name is the
//! governance principal, its tenant and scopes go with every call. Tools
//! are named by label (`label__tool`); the servers' URLs and credentials
//! never leave the gateway.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpHub, Policy};
use windlass_server::scopes::Scope;
use windlass_server::AuthedKey;
use windlass_tools::builtins::BUILTIN_LABEL;
use windlass_tools::mcp_server::{
    mcp_http_service, GatewayMcpServer, McpCaller, McpEndpointOptions, PolicyGate,
};

/// The router answering `/mcp`: `labels`' tools from `hub`, every call
/// through `policy` (the same governance gate the engine's calls pass).
pub fn endpoint(
    hub: Arc<dyn McpHub>,
    labels: Vec<String>,
    policy: Arc<dyn Policy>,
    shutdown: CancellationToken,
) -> Router {
    let server = GatewayMcpServer::new(hub, labels, Arc::new(PolicyGate::new(policy)));
    let options = McpEndpointOptions {
        // The gateway's own `Host` check runs before (loopback listeners).
        allowed_hosts: Vec::new(),
        shutdown,
        ..McpEndpointOptions::default()
    };
    Router::new()
        .route_service("/mcp", mcp_http_service(server, options))
        .layer(axum::middleware::from_fn(caller_from_key))
}

/// The labels served: the built-ins' when any is enabled, then the
/// operator's servers.
pub fn labels(mcp: &windlass_tools::McpConfig, builtins_enabled: bool) -> Vec<String> {
    let servers = mcp.servers.iter().map(|s| s.label.clone());
    builtins_enabled
        .then(|| BUILTIN_LABEL.to_owned())
        .into_iter()
        .chain(servers)
        .collect()
}

/// The key guard's [`AuthedKey`] as the endpoint's [`McpCaller`]; a request
/// without one (no keys configured) reaches the endpoint without a caller
/// and is refused by it.
async fn caller_from_key(mut req: Request, next: Next) -> Response {
    if let Some(key) = req.extensions().get::<AuthedKey>().cloned() {
        let scopes = Scope::ALL
            .into_iter()
            .filter(|s| key.scopes.contains(*s))
            .map(|s| s.as_str().to_owned())
            .collect();
        req.extensions_mut().insert(McpCaller {
            key_name: key.name,
            tenant: key.tenant,
            scopes,
        });
    }
    next.run(req).await
}

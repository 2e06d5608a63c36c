//! An operator-configured server: its session, cached tool list and health,
//! and the background task that keeps it connected.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpError, ToolResult};
use windlass_protocol::{McpRequireApproval, McpToolInfo};

use crate::client::{ListLimits, McpSession};
use crate::config::{McpServerConfig, ServerTransport};
use crate::session::Slot;
use crate::transport::Endpoint;

const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);
/// How often a connected server's session is checked for life; the check
/// is a flag read, so this costs nothing, and it lets a crashed stdio
/// server be respawned before anyone needs it.
const HEALTH_TICK: Duration = Duration::from_secs(2);

/// Connection state shown to operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Connected,
    Connecting,
    Unavailable,
}

/// One configured server as `GET /v1/mcp/servers` shows it. Holds no
/// headers, tokens or environment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerStatus {
    pub label: String,
    /// `"stdio"` or `"http"`.
    pub transport: &'static str,
    /// The server URL without credentials, query or fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub state: ServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The last tool list the server gave.
    pub tools: Vec<McpToolInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

struct Health {
    state: ServerState,
    last_error: Option<String>,
    tools: Vec<McpToolInfo>,
    /// The tool list belongs to the current session (false after a
    /// reconnect until re-listed, or after a failed listing).
    listed: bool,
    protocol_version: Option<String>,
}

pub(crate) struct Configured {
    pub(crate) label: String,
    kind: &'static str,
    display_url: Option<String>,
    pub(crate) require_approval: Option<McpRequireApproval>,
    /// `Err` holds the configuration error: such a server is never tried.
    endpoint: Result<Endpoint, String>,
    slot: Slot,
    health: Mutex<Health>,
}

/// The URL minus anything secret-looking (user info, query, fragment).
fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "[invalid url]".to_owned(),
    }
}

impl Configured {
    pub(crate) fn new(config: &McpServerConfig, problem: Option<String>) -> Configured {
        let endpoint = match problem {
            Some(problem) => Err(problem),
            None => config
                .transport()
                .map(|t| match t {
                    ServerTransport::Http { url, headers } => Endpoint::Http {
                        url,
                        headers,
                        pinned: None,
                    },
                    ServerTransport::Stdio {
                        command,
                        args,
                        env,
                        cwd,
                    } => Endpoint::Stdio {
                        command,
                        args,
                        env,
                        cwd,
                    },
                })
                .map_err(|e| e.to_string()),
        };
        let kind = match (&endpoint, &config.command) {
            (Ok(e), _) => e.kind(),
            (Err(_), Some(_)) => "stdio",
            (Err(_), None) => "http",
        };
        let (state, last_error) = match &endpoint {
            Ok(_) => (ServerState::Connecting, None),
            Err(e) => (ServerState::Unavailable, Some(e.clone())),
        };
        Configured {
            label: config.label.clone(),
            kind,
            display_url: config.url.as_deref().map(display_url),
            require_approval: config.require_approval.clone(),
            endpoint,
            slot: Slot::new(),
            health: Mutex::new(Health {
                state,
                last_error,
                tools: Vec::new(),
                listed: false,
                protocol_version: None,
            }),
        }
    }

    pub(crate) fn is_valid(&self) -> bool {
        self.endpoint.is_ok()
    }

    fn health(&self) -> MutexGuard<'_, Health> {
        // A panic while holding this lock leaves plain data behind; keep
        // serving it rather than poisoning every later call.
        self.health.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let h = self.health();
        ServerStatus {
            label: self.label.clone(),
            transport: self.kind,
            url: self.display_url.clone(),
            state: h.state,
            last_error: h.last_error.clone(),
            tools: h.tools.clone(),
            protocol_version: h.protocol_version.clone(),
        }
    }

    fn mark_unavailable(&self, error: &McpError) {
        tracing::warn!(mcp_server = %self.label, "MCP server unavailable: {error}");
        let mut h = self.health();
        h.state = ServerState::Unavailable;
        h.last_error = Some(error.to_string());
        h.listed = false;
    }

    /// The live session, connecting (and re-listing tools) if needed.
    async fn session(
        &self,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Arc<McpSession>, McpError> {
        let endpoint = self
            .endpoint
            .as_ref()
            .map_err(|e| McpError::Unavailable(format!("misconfigured: {e}")))?;
        let lease = self
            .slot
            .get(|notify| {
                {
                    let mut h = self.health();
                    if h.state != ServerState::Unavailable {
                        h.state = ServerState::Connecting;
                    }
                }
                McpSession::connect(&self.label, endpoint, notify, timeout, cancel)
            })
            .await;
        let lease = match lease {
            Ok(lease) => lease,
            Err(McpError::Cancelled) => return Err(McpError::Cancelled),
            Err(e) => {
                self.mark_unavailable(&e);
                return Err(e);
            }
        };
        if lease.fresh {
            let version = lease.session.protocol_version();
            tracing::info!(
                mcp_server = %self.label,
                protocol = version.as_deref().unwrap_or("?"),
                "MCP server connected"
            );
            {
                let mut h = self.health();
                h.last_error = None;
                h.listed = false;
                h.protocol_version = version;
            }
            // A new session may serve a different tool list (the server was
            // upgraded or respawned). Operators see `connected` only once the
            // list is in, so a connected server never shows stale tools.
            self.relist(&lease.session, timeout, cancel).await?;
            self.health().state = ServerState::Connected;
        }
        Ok(lease.session)
    }

    /// Lists the tools again and caches them. A server that refuses to list
    /// stays usable for calls; one that is gone is marked unavailable.
    async fn relist(
        &self,
        session: &Arc<McpSession>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(), McpError> {
        match session
            .list_tools(timeout, cancel, ListLimits::UNLIMITED)
            .await
        {
            Ok(tools) => {
                let mut h = self.health();
                h.tools = tools;
                h.listed = true;
                h.last_error = None;
                Ok(())
            }
            Err(e @ (McpError::Unavailable(_) | McpError::Timeout(_))) => {
                self.slot.discard(session).await;
                self.mark_unavailable(&e);
                Err(e)
            }
            Err(McpError::Cancelled) => Err(McpError::Cancelled),
            Err(e) => {
                self.health().last_error = Some(format!("tools/list failed: {e}"));
                Ok(())
            }
        }
    }

    pub(crate) async fn list_tools(
        &self,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        let session = self.session(timeout, cancel).await?;
        {
            let h = self.health();
            if h.listed {
                return Ok(h.tools.clone());
            }
        }
        // The listing on connect failed softly; ask again and report why.
        let tools = session
            .list_tools(timeout, cancel, ListLimits::UNLIMITED)
            .await?;
        let mut h = self.health();
        h.tools = tools.clone();
        h.listed = true;
        Ok(tools)
    }

    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError> {
        let session = self.session(timeout, cancel).await?;
        let result = session.call_tool(tool, arguments, timeout, cancel).await;
        if let Err(e @ McpError::Unavailable(_)) = &result {
            // The next use (or the supervisor) reconnects; a crashed stdio
            // server is respawned.
            self.slot.discard(&session).await;
            self.mark_unavailable(e);
        }
        result
    }

    pub(crate) async fn close(&self) {
        self.slot.close().await;
    }

    /// Keeps the server connected: connects at boot, retries with backoff
    /// (1 s doubling to 60 s) while it is down, re-lists tools when the
    /// server says they changed, and reconnects when the session dies.
    pub(crate) async fn supervise(self: Arc<Self>, timeout: Duration, stop: CancellationToken) {
        let mut backoff = FIRST_RETRY;
        loop {
            match self.session(timeout, &stop).await {
                Ok(session) => {
                    backoff = FIRST_RETRY;
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = self.slot.tools_changed.notified() => {
                            tracing::debug!(mcp_server = %self.label, "tool list changed");
                            let _ = self.relist(&session, timeout, &stop).await;
                        }
                        _ = tokio::time::sleep(HEALTH_TICK) => {}
                    }
                }
                Err(_) => {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(MAX_RETRY);
                }
            }
            if stop.is_cancelled() {
                return;
            }
        }
    }
}

//! `McpServers`: the engine's [`McpHub`] over configured servers and
//! request-declared ones.
//!
//! Configured servers are trusted, connected in the background at start and
//! kept connected; requests name them by label. Request-declared servers
//! (`server_url`) pass the outbound guard, and their sessions are cached by
//! (url, headers) for a few idle minutes so a response chain does not
//! re-initialize for every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use windlass_engine::{McpError, McpHub, McpServerRef, ToolResult};
use windlass_protocol::{McpRequireApproval, McpToolInfo};

use crate::client::{ListLimits, McpSession};
use crate::config::{ConfigError, McpConfig};
use crate::configured::{Configured, ServerStatus};
use crate::session::Slot;
use crate::ssrf::{check_url, AllowList};
use crate::transport::{header_map, Endpoint};

/// How often idle request-declared sessions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// Cache key of a request-declared server. Holds headers (secrets): no
/// Debug.
#[derive(PartialEq, Eq, Hash)]
struct DeclaredKey {
    url: String,
    headers: Vec<(String, String)>,
}

impl DeclaredKey {
    fn new(url: &str, headers: &[(String, String)]) -> DeclaredKey {
        let mut headers = headers.to_vec();
        // Same headers in another order are the same identity.
        headers.sort();
        DeclaredKey {
            url: url.to_owned(),
            headers,
        }
    }
}

struct Declared {
    slot: Slot,
    last_used: Mutex<Instant>,
}

impl Declared {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }
}

/// The MCP servers of a gateway (implements [`McpHub`]).
pub struct McpServers {
    call_timeout: Duration,
    idle: Duration,
    allow: AllowList,
    /// Bounds of a request-declared server's tool list.
    list_limits: ListLimits,
    /// In config order, for `status()`.
    configured: Vec<Arc<Configured>>,
    by_label: HashMap<String, Arc<Configured>>,
    declared: Mutex<HashMap<DeclaredKey, Arc<Declared>>>,
    stop: CancellationToken,
}

impl McpServers {
    /// Builds the hub and, inside a Tokio runtime, starts connecting every
    /// configured server in the background: a server that is down does not
    /// delay or stop startup; it shows as `unavailable` in [`status`] and is
    /// retried with backoff (1 s doubling to 60 s) and on next use.
    ///
    /// Does not fail: an invalid server entry is kept as permanently
    /// `unavailable` with the configuration error as `last_error`, and a bad
    /// `allow_hosts` leaves the allowlist empty (strictest). Call
    /// [`McpConfig::validate`] when loading the config to refuse such a
    /// config up front, or use [`McpServers::try_start`].
    ///
    /// Background work stops when the returned hub is dropped or
    /// [`shutdown`](Self::shutdown) is called.
    ///
    /// [`status`]: Self::status
    pub fn start(config: McpConfig) -> Arc<McpServers> {
        let allow = config.allow_list().unwrap_or_else(|e| {
            tracing::error!("{e}; no MCP outbound exceptions apply");
            AllowList::default()
        });
        let mut configured = Vec::with_capacity(config.servers.len());
        let mut by_label = HashMap::new();
        for server in &config.servers {
            let problem = by_label
                .contains_key(&server.label)
                .then(|| ConfigError::DuplicateLabel(server.label.clone()).to_string());
            let entry = Arc::new(Configured::new(server, problem));
            if let Some(problem) = entry.status().last_error {
                tracing::error!(mcp_server = %server.label, "not started: {problem}");
            }
            if entry.is_valid() {
                by_label.insert(server.label.clone(), entry.clone());
            }
            configured.push(entry);
        }
        let hub = Arc::new(McpServers {
            call_timeout: config.call_timeout(),
            list_limits: config.list_limits(),
            idle: config.session_idle(),
            allow,
            configured,
            by_label,
            declared: Mutex::new(HashMap::new()),
            stop: CancellationToken::new(),
        });
        // Without a runtime there is nothing to run background work on;
        // servers then connect on first use.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            for server in hub.configured.iter().filter(|s| s.is_valid()) {
                runtime.spawn(
                    server
                        .clone()
                        .supervise(hub.call_timeout, hub.stop.child_token()),
                );
            }
            runtime.spawn(sweep_idle(Arc::downgrade(&hub), hub.stop.child_token()));
        }
        hub
    }

    /// [`McpConfig::validate`], then [`start`](Self::start).
    pub fn try_start(config: McpConfig) -> Result<Arc<McpServers>, ConfigError> {
        config.validate()?;
        Ok(McpServers::start(config))
    }

    /// Every configured server, in config order (for `GET /v1/mcp/servers`).
    pub fn status(&self) -> Vec<ServerStatus> {
        self.configured.iter().map(|s| s.status()).collect()
    }

    /// The operator's `require_approval` for a configured server, used when
    /// a request does not say.
    pub fn default_approval(&self, label: &str) -> Option<McpRequireApproval> {
        self.by_label
            .get(label)
            .and_then(|s| s.require_approval.clone())
    }

    /// Stops background work and closes every session (stdio servers are
    /// stopped, HTTP sessions deleted).
    pub async fn shutdown(&self) {
        self.stop.cancel();
        for server in &self.configured {
            server.close().await;
        }
        let declared: Vec<_> = self.declared().drain().map(|(_, d)| d).collect();
        for entry in declared {
            entry.slot.close().await;
        }
    }

    fn declared(&self) -> MutexGuard<'_, HashMap<DeclaredKey, Arc<Declared>>> {
        self.declared.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn configured_server(&self, label: &str) -> Result<&Arc<Configured>, McpError> {
        self.by_label.get(label).ok_or_else(|| {
            McpError::Refused(format!("no MCP server labelled '{label}' is configured"))
        })
    }

    /// Drops request-declared sessions unused for the idle time. One in use
    /// by a running call (someone else holds it) stays.
    fn sweep(&self) {
        let idle = self.idle;
        let mut expired = Vec::new();
        self.declared().retain(|_, entry| {
            let keep = Arc::strong_count(entry) > 1 || entry.idle_for() < idle;
            if !keep {
                expired.push(entry.clone());
            }
            keep
        });
        for entry in expired {
            tokio::spawn(async move { entry.slot.close().await });
        }
    }

    /// The session with a request-declared server, guarded and cached.
    async fn declared_session(
        &self,
        server: &McpServerRef,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<(Arc<Declared>, Arc<McpSession>), McpError> {
        let entry = self
            .declared()
            .entry(DeclaredKey::new(url, &server.headers))
            .or_insert_with(|| {
                Arc::new(Declared {
                    slot: Slot::new(),
                    last_used: Mutex::new(Instant::now()),
                })
            })
            .clone();
        entry.touch();
        let timeout = self.call_timeout;
        let lease = entry
            .slot
            .get(|notify| async move {
                // Checked again at connect time, and the addresses found
                // now are the only ones this session will ever dial.
                let checked = check_url(url, &self.allow)
                    .await
                    .map_err(|e| McpError::Refused(e.to_string()))?;
                let endpoint = Endpoint::Http {
                    url: url.to_owned(),
                    headers: server.headers.clone(),
                    pinned: Some((checked.host, checked.addrs)),
                };
                McpSession::connect(&server.label, &endpoint, notify, timeout, cancel).await
            })
            .await?;
        Ok((entry, lease.session))
    }

    /// Runs `op` on a declared server's session; a transport failure drops
    /// the session so the next use reconnects.
    async fn with_declared<T, F, Fut>(
        &self,
        server: &McpServerRef,
        url: &str,
        cancel: &CancellationToken,
        op: F,
    ) -> Result<T, McpError>
    where
        F: FnOnce(Arc<McpSession>) -> Fut,
        Fut: std::future::Future<Output = Result<T, McpError>>,
    {
        let (entry, session) = self.declared_session(server, url, cancel).await?;
        let result = op(session.clone()).await;
        if matches!(result, Err(McpError::Unavailable(_))) {
            entry.slot.discard(&session).await;
        }
        entry.touch();
        result
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        // Supervisors and the sweeper end; sessions close as their last
        // holder drops them (rmcp cancels the service, the child is killed).
        self.stop.cancel();
    }
}

async fn sweep_idle(hub: Weak<McpServers>, stop: CancellationToken) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
        }
        match hub.upgrade() {
            Some(hub) => hub.sweep(),
            None => return,
        }
    }
}

#[async_trait::async_trait]
impl McpHub for McpServers {
    async fn check(&self, server: &McpServerRef) -> Result<(), McpError> {
        let Some(url) = &server.url else {
            return self.configured_server(&server.label).map(|_| ());
        };
        header_map(&server.headers).map_err(|e| McpError::Refused(format!("MCP {e}")))?;
        check_url(url, &self.allow)
            .await
            .map(|_| ())
            .map_err(|e| McpError::Refused(e.to_string()))
    }

    async fn list_tools(
        &self,
        server: &McpServerRef,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        let timeout = self.call_timeout;
        match &server.url {
            None => {
                self.configured_server(&server.label)?
                    .list_tools(timeout, cancel)
                    .await
            }
            Some(url) => {
                let limits = self.list_limits;
                self.with_declared(server, url, cancel, |session| async move {
                    session.list_tools(timeout, cancel, limits).await
                })
                .await
            }
        }
    }

    async fn call_tool(
        &self,
        server: &McpServerRef,
        tool: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError> {
        let timeout = self.call_timeout;
        match &server.url {
            None => {
                self.configured_server(&server.label)?
                    .call_tool(tool, arguments, timeout, cancel)
                    .await
            }
            Some(url) => {
                self.with_declared(server, url, cancel, |session| async move {
                    session.call_tool(tool, arguments, timeout, cancel).await
                })
                .await
            }
        }
    }

    fn default_approval(&self, label: &str) -> Option<McpRequireApproval> {
        McpServers::default_approval(self, label)
    }
}

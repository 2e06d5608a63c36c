//! How a session reaches its server: a child process on stdio, or
//! streamable HTTP over a reqwest client we build ourselves (TLS provider,
//! pinned addresses, redirect policy, headers).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::redirect;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use crate::trace_context::TracingClient;
use tokio::io::{AsyncBufReadExt, BufReader};

/// TCP connect timeout; the whole handshake is bounded by the call timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects a configured (trusted) server may answer with, e.g. `/mcp` to
/// `/mcp/`.
const MAX_TRUSTED_REDIRECTS: usize = 5;

/// Where a session connects. Holds secrets (headers, env), so no Debug.
#[derive(Clone)]
pub(crate) enum Endpoint {
    Http {
        url: String,
        /// Sent with every request (including `Authorization`). Secret.
        headers: Vec<(String, String)>,
        /// For request-declared servers: the host and the addresses the
        /// outbound guard approved. The client connects only there and
        /// follows no redirects. `None` for trusted (configured) servers.
        pinned: Option<(String, Vec<SocketAddr>)>,
    },
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
}

impl Endpoint {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Endpoint::Http { .. } => "http",
            Endpoint::Stdio { .. } => "stdio",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TransportError {
    #[error("header {0:?} is not a valid HTTP header")]
    Header(String),
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("HTTP client setup failed: {0}")]
    Client(String),
    #[error("could not start `{command}`: {error}")]
    Spawn { command: String, error: String },
}

/// A rustls config on the ring provider, built once. Built here rather
/// than by reqwest because reqwest 0.13's default provider is aws-lc, which
/// the rest of the workspace does not build. Certificates are checked
/// against the system's roots (so an operator's own CA works), falling back
/// to the bundled webpki roots where the system has none.
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, TransportError> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let mut config = match rustls_platform_verifier::Verifier::new(provider) {
            Ok(verifier) => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth(),
            Err(e) => {
                tracing::warn!("system certificate roots unavailable ({e}); using webpki roots");
                let roots = rustls::RootCertStore {
                    roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
                };
                builder.with_root_certificates(roots).with_no_client_auth()
            }
        };
        // MCP traffic stays on HTTP/1.1; say so in ALPN.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    })
    .clone()
    .map_err(TransportError::Tls)
}

pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, TransportError> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| TransportError::Header(name.clone()))?;
        let mut header_value =
            HeaderValue::from_str(value).map_err(|_| TransportError::Header(name.clone()))?;
        header_value.set_sensitive(true);
        map.append(header_name, header_value);
    }
    Ok(map)
}

/// The HTTP client of one session. Custom headers are client defaults, so
/// rmcp's own protocol headers (Accept, session id) always take precedence.
fn http_client(
    headers: &[(String, String)],
    pinned: Option<&(String, Vec<SocketAddr>)>,
) -> Result<reqwest::Client, TransportError> {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config()?)
        .default_headers(header_map(headers)?)
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true);
    builder = match pinned {
        Some((host, addrs)) => builder
            // DNS rebinding: connect only to what the guard checked.
            .resolve_to_addrs(host, addrs)
            // A redirect could point anywhere; a proxy would resolve the
            // name again on its side.
            .redirect(redirect::Policy::none())
            .no_proxy(),
        None => builder.redirect(redirect::Policy::limited(MAX_TRUSTED_REDIRECTS)),
    };
    builder
        .build()
        .map_err(|e| TransportError::Client(e.to_string()))
}

/// SSE reconnects after a broken stream: a couple of quick tries, so a dead
/// server surfaces as an error instead of a call hanging until its timeout.
#[derive(Debug)]
struct QuickRetry;

impl SseRetryPolicy for QuickRetry {
    fn retry(&self, attempt: usize) -> Option<Duration> {
        match attempt {
            0 => Some(Duration::from_millis(100)),
            1 => Some(Duration::from_millis(500)),
            _ => None,
        }
    }
}

pub(crate) fn http_transport(
    url: &str,
    headers: &[(String, String)],
    pinned: Option<&(String, Vec<SocketAddr>)>,
) -> Result<StreamableHttpClientTransport<TracingClient>, TransportError> {
    let client = http_client(headers, pinned)?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        // Expired session (404): re-initialize once and retry the request once.
        .reinit_on_expired_session(true);
    config.retry_config = Arc::new(QuickRetry);
    Ok(StreamableHttpClientTransport::with_client(
        TracingClient(client),
        config,
    ))
}

/// Spawns a stdio server. Its stderr goes to the log (at debug), not to the
/// gateway's own stderr.
pub(crate) fn stdio_transport(
    label: &str,
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&PathBuf>,
) -> Result<TokioChildProcess, TransportError> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // Belt and braces: rmcp kills the child when the transport drops, and
    // tokio does too if that task never runs (runtime shutdown).
    cmd.kill_on_drop(true);
    let (process, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| TransportError::Spawn {
            command: command.to_owned(),
            error: e.to_string(),
        })?;
    if let Some(stderr) = stderr {
        let label = label.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(mcp_server = %label, "stderr: {line}");
            }
        });
    }
    Ok(process)
}

//! `windlass serve`: wire the adapters into the engine and serve HTTP.

use std::sync::Arc;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;
use windlass_engine::Engine;
use windlass_server::{logging, AppState, McpDirectory, Metrics, TimedStore};
use windlass_tools::McpServers;

use crate::cli::{LogFormat, ServeArgs};
use crate::config::{resolve, ConfigError};
use crate::govern::{govern, GovernError};
use crate::otlp::{OtlpError, OtlpSettings, Tracing};
use crate::store_open::{display_db, open_store};
use crate::upstreams::{build_router, describe};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Govern(#[from] GovernError),
    #[error("upstream: {0}")]
    Provider(#[from] windlass_engine::ProviderError),
    #[error("store: {0}")]
    Store(#[from] windlass_engine::StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Otlp(#[from] OtlpError),
    #[error(transparent)]
    Webhooks(#[from] crate::webhooks::WebhooksError),
    #[error("[auth.oidc]: {0}")]
    Oidc(#[from] windlass_auth::JwksError),
    #[error(transparent)]
    Hosted(#[from] crate::hosted_tools::HostedToolsError),
    #[error(transparent)]
    WebSearch(#[from] windlass_tools::hosted::web_search::WebSearchConfigError),
    #[error(transparent)]
    Resources(#[from] crate::resources::ResourcesError),
}

pub fn init_logging(format: LogFormat) {
    let _ = subscriber(format, None).try_init();
}

/// Log lines filtered by `RUST_LOG` (default `info`); exported spans, when
/// an exporter is given, filtered on their own so a quiet log does not turn
/// the traces off: Windlass's spans down to `debug` (the model-turn and
/// tool-call spans are at debug, out of the info log), its events at `info`.
fn subscriber(
    format: LogFormat,
    tracer: Option<opentelemetry_sdk::trace::Tracer>,
) -> impl tracing::Subscriber + Send + Sync {
    let format = match format {
        LogFormat::Json => logging::LogFormat::Json,
        LogFormat::Text => logging::LogFormat::Text,
    };
    let spans = tracer.map(|t| {
        let ours = tracing_subscriber::filter::filter_fn(|m| {
            let level = if m.is_span() {
                tracing::Level::DEBUG
            } else {
                tracing::Level::INFO
            };
            m.target().starts_with("windlass") && *m.level() <= level
        });
        tracing_opentelemetry::layer()
            .with_tracer(t)
            .with_filter(ours)
    });
    tracing_subscriber::registry()
        .with(logging::log_layer(format))
        .with(spans)
}

/// Logging, plus trace export when configured.
fn init_telemetry(
    format: LogFormat,
    otlp: Option<&OtlpSettings>,
) -> Result<Option<Tracing>, ServeError> {
    let Some(settings) = otlp else {
        init_logging(format);
        return Ok(None);
    };
    let (tracing, tracer) = Tracing::start(settings)?;
    let _ = subscriber(format, Some(tracer)).try_init();
    tracing::info!(endpoint = %settings.traces_url, "exporting traces over OTLP");
    Ok(Some(tracing))
}

pub async fn run(args: ServeArgs) -> Result<(), ServeError> {
    let settings = resolve(args)?;
    let telemetry = init_telemetry(settings.log_format, settings.otlp.as_ref())?;
    windlass_providers::install_crypto_provider();
    let upstream = describe(&settings.upstreams);
    let provider = build_router(&settings.upstreams).map_err(ConfigError::from)?;
    let notifier = crate::webhooks::notifier(&settings.webhooks)?;
    let metrics = Metrics::from_config(&settings.server.metrics);
    let opened = open_store(&settings.db, &settings.store, &settings.pg).await?;
    let resources = crate::resources::wire(
        &opened,
        &settings.files,
        &settings.retrieval,
        &provider,
        &settings.upstreams,
    )?;
    if let Some(days) = settings.retention_days {
        crate::retention::spawn(opened.store.clone(), days);
    }
    if let Some(days) = settings.conversation_retention_days {
        crate::retention::spawn_conversations(opened.conversation_retention.clone(), days);
    }
    // Configured servers connect in the background; one that is down does
    // not hold up startup.
    let mcp_labels = crate::mcp_mount::labels(&settings.mcp, !settings.builtins.enabled.is_empty());
    let mcp = McpServers::start(settings.mcp);
    let server_run = crate::hosted_tools::server_run(settings.server_run.as_ref()).await?;
    let governed = govern(
        settings.builtins,
        settings.governance,
        mcp.clone(),
        opened.counters.clone(),
    )
    .await?;
    let code_interpreter = crate::hosted_tools::code_interpreter(
        &settings.code_interpreter,
        opened.containers.clone(),
        opened.files.clone(),
    )
    .await?;
    let mut builder = Engine::builder(provider, TimedStore::wrap(opened.store, &metrics)).executor(
        // The same embedder as the Vector stores API, so the tool searches
        // hybrid wherever the stores were embedded.
        crate::hosted::retrieval_executor(opened.vector_stores, resources.embedder.clone()),
    );
    if let Some(executor) = code_interpreter {
        builder = builder.executor(executor);
    }
    if let Some(executor) = server_run {
        builder = builder.executor(executor);
    }
    if let Some(web) = crate::hosted::web_search_executor(settings.web_search.as_ref())? {
        builder = builder.executor(web);
    }
    if let Some(conversations) = opened.conversations {
        builder = builder.conversations(conversations);
    }
    let engine = builder
        .mcp(governed.hub.clone())
        .policy(governed.policy.clone())
        .config(settings.engine)
        .build();
    let mut state = AppState::new(engine, settings.server)
        .with_mcp(Arc::new(McpView(mcp.clone())))
        .with_runs(opened.runs)
        .with_prompts(opened.prompts)
        .with_cancel_bus(opened.cancel_bus)
        .with_metrics(metrics)
        .with_resources(resources);
    if let Some(quota) = opened.quota {
        state = state.with_quota(quota);
    }
    if let Some(notifier) = notifier {
        state = state.with_notifier(notifier);
    }
    if let Some(oidc) = settings.oidc {
        tracing::info!(issuer = %oidc.issuer, "bearer JWTs of the OIDC issuer accepted as keys");
        state = state.with_jwt(Arc::new(windlass_auth::JwtVerifier::new(oidc)?));
    }
    let mcp_shutdown = tokio_util::sync::CancellationToken::new();
    state = mount_mcp(state, &governed, mcp_labels, mcp_shutdown.clone());
    let listener = tokio::net::TcpListener::bind(&settings.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: settings.listen.clone(),
            source,
        })?;
    tracing::info!(listen = %listener.local_addr()?, %upstream, db = %display_db(&settings.db), "windlass serving");
    log_connection_caps(&state, settings.fd_caps);
    // The first signal drains; a second one cancels what is still running
    // at once instead of waiting out the grace period.
    let lifecycle = state.lifecycle.clone();
    let first = shutdown_signal();
    let shutdown = async move {
        first.await;
        let second = shutdown_signal();
        tokio::spawn(async move {
            second.await;
            lifecycle.cut_short();
        });
    };
    let shutdown = async move {
        shutdown.await;
        mcp_shutdown.cancel();
    };
    windlass_server::serve(listener, state, shutdown).await?;
    mcp.shutdown().await;
    if let Some(t) = telemetry {
        t.shutdown().await;
    }
    Ok(())
}

/// `/mcp` whenever keys are configured (the endpoint needs a caller).
fn mount_mcp(
    state: AppState,
    governed: &crate::govern::Governed,
    labels: Vec<String>,
    shutdown: tokio_util::sync::CancellationToken,
) -> AppState {
    let keyed = matches!(&*state.keys, Ok(ring) if !ring.is_empty()) || state.jwt.is_some();
    if !keyed {
        return state;
    }
    tracing::info!(servers = ?labels, "serving the MCP endpoint at /mcp");
    let endpoint = crate::mcp_mount::endpoint(
        governed.hub.clone(),
        labels,
        governed.policy.clone(),
        shutdown,
    );
    state.with_mcp_endpoint(endpoint)
}

/// Says which connection caps hold and where they come from.
fn log_connection_caps(state: &AppState, derived: Option<windlass_server::fd_caps::FdCaps>) {
    let c = &state.config.connections;
    match derived {
        Some(d) => tracing::info!(
            max_connections = c.max_connections,
            hard_max_connections = c.hard_max_connections,
            open_file_limit = d.soft_limit,
            headroom = d.headroom,
            "connection caps follow the open-file limit (RLIMIT_NOFILE), less headroom for the store, upstreams and MCP"
        ),
        None => tracing::info!(
            max_connections = c.max_connections,
            hard_max_connections = c.hard_max_connections,
            "connection caps as configured"
        ),
    }
}

/// The operator view of the MCP servers for `GET /v1/mcp/servers`.
struct McpView(Arc<McpServers>);

impl McpDirectory for McpView {
    fn servers(&self) -> Vec<serde_json::Value> {
        self.0
            .status()
            .iter()
            .map(|s| {
                serde_json::to_value(s).unwrap_or_else(|e| {
                    tracing::warn!(mcp_server = %s.label, error = %e, "cannot show MCP server status");
                    serde_json::json!({"label": s.label, "last_error": e.to_string()})
                })
            })
            .collect()
    }
}

/// Resolves on SIGTERM or Ctrl-C. The listeners exist from the call on,
/// so a signal that arrives before the first poll is not missed.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let listeners = {
        use tokio::signal::unix::{signal, SignalKind};
        [SignalKind::terminate(), SignalKind::interrupt()].map(|kind| signal(kind).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let [term, int] = listeners;
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = wait(term) => {},
                _ = wait(int) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

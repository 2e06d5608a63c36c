//! `windlass serve`: wire the adapters into the engine and serve HTTP.

use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use windlass_engine::Engine;
use windlass_server::{AppState, McpDirectory};
use windlass_store::SqliteStore;
use windlass_tools::McpServers;

use crate::cli::{LogFormat, ServeArgs};
use crate::config::{resolve, ConfigError};
use crate::govern::{govern, GovernError};
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
}

pub fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

pub async fn run(args: ServeArgs) -> Result<(), ServeError> {
    let settings = resolve(args)?;
    init_logging(settings.log_format);
    windlass_providers::install_crypto_provider();
    let upstream = describe(&settings.upstreams);
    let provider = build_router(&settings.upstreams).map_err(ConfigError::from)?;
    let store = Arc::new(SqliteStore::open_with(&settings.db, settings.store.clone()).await?);
    if let Some(days) = settings.retention_days {
        crate::retention::spawn(store.clone(), days);
    }
    // Configured servers connect in the background; one that is down does
    // not hold up startup.
    let mcp = McpServers::start(settings.mcp);
    let governed = govern(settings.builtins, settings.governance, mcp.clone()).await?;
    let engine = Engine::builder(provider, store)
        .mcp(governed.hub)
        .policy(governed.policy)
        .config(settings.engine)
        .build();
    let state = AppState::new(engine, settings.server).with_mcp(Arc::new(McpView(mcp.clone())));
    let listener = tokio::net::TcpListener::bind(&settings.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: settings.listen.clone(),
            source,
        })?;
    tracing::info!(listen = %listener.local_addr()?, %upstream, db = %settings.db, "windlass serving");
    windlass_server::serve(listener, state, shutdown_signal()).await?;
    mcp.shutdown().await;
    Ok(())
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

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

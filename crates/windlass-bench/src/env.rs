//! The bench environment: one fake upstream, and Windlass in front of it on
//! its own tokio runtime (threads named `windlass-rt*`) and its connection
//! threads (`windlass-conn-*`), with a temp SQLite file or, with `--db
//! postgres://...`, a Postgres database.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use windlass_engine::{Engine, EngineConfig, ResponseStore};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};
use windlass_server::{AppState, Metrics, ServerConfig, TimedStore};
use windlass_store::{PgStore, SqliteOptions, SqliteStore};
use windlass_testkit::{FakeUpstream, MockBehavior, MockExecutor};

use crate::settings::Settings;

/// Name of the server-side tool of the agentic-loop scenario.
pub(crate) const TOOL_NAME: &str = "bench_sleep";

/// The parallel-tools scenario's server-side tool, and how long it sleeps.
pub(crate) const PARALLEL_TOOL_NAME: &str = "bench_sleep_200ms";
pub(crate) const PARALLEL_TOOL_MS: u64 = 200;

/// Long enough never to fire during a run (idle streams stay open for seconds).
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(3600);

pub(crate) struct Bench {
    pub upstream: FakeUpstream,
    /// The load generator's HTTP client (big pool, no proxy, TCP_NODELAY).
    pub client: reqwest::Client,
    /// `POST` URL of the upstream's chat completions (the direct path).
    pub direct_url: Arc<str>,
    /// `POST` URL of Windlass's `/v1/responses`.
    pub windlass_url: Arc<str>,
    /// `POST` URL of the upstream's chat completions through a bare TCP
    /// relay on Windlass's runtime (see `relay.rs`).
    pub relay_url: Arc<str>,
    pub store: Arc<dyn ResponseStore>,
    /// The engine's `tool_concurrency` in this run.
    pub tool_concurrency: usize,
    /// The runtime Windlass runs on.
    pub wl: Handle,
    db: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
}

fn temp_db() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "windlass-bench-{}-{nanos:x}.db",
        std::process::id()
    ))
}

/// The temp SQLite file, or the Postgres database at `pg` emptied first
/// (so each run starts from the same state).
async fn open_store(
    sqlite: &str,
    pg: Option<&str>,
    options: SqliteOptions,
) -> Result<Arc<dyn ResponseStore>, String> {
    let Some(url) = pg else {
        let store = SqliteStore::open_with(sqlite, options)
            .await
            .map_err(|e| format!("sqlite store: {e}"))?;
        return Ok(Arc::new(store));
    };
    let store = PgStore::open(url)
        .await
        .map_err(|e| format!("postgres store: {e}"))?;
    store
        .truncate_for_bench()
        .await
        .map_err(|e| format!("postgres store: {e}"))?;
    Ok(Arc::new(store))
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(8192)
        .pool_idle_timeout(Duration::from_secs(300))
        .build()
        .expect("reqwest client")
}

impl Bench {
    /// Starts the fake upstream on the current (client) runtime and Windlass
    /// on `wl`.
    pub(crate) async fn start(s: &Settings, wl: Handle) -> Result<Bench, String> {
        let upstream = FakeUpstream::start().await;
        upstream.set_record_requests(false);
        let db = temp_db();
        let db_str = db.to_str().ok_or("temp path is not UTF-8")?.to_owned();
        let pg_url = s.db.clone();
        let mut pcfg = ChatProviderConfig::new(upstream.base_url());
        pcfg.max_retries = 0;
        pcfg.first_byte_timeout = PROVIDER_TIMEOUT;
        pcfg.idle_timeout = PROVIDER_TIMEOUT;
        let engine_cfg = EngineConfig {
            // The loop scenario: the upstream always answers with tool calls,
            // so every loop is exactly `turns` model turns, each followed by
            // its tool calls, then `incomplete` / `max_turns`.
            max_agentic_turns: s.turns,
            // The shipped default, unless the loop scenario asks for more
            // parallel calls per turn than it allows.
            tool_concurrency: s
                .tool_concurrency
                .unwrap_or_else(|| EngineConfig::default().tool_concurrency.max(s.tool_calls)),
            ..EngineConfig::default()
        };
        let tool_concurrency = engine_cfg.tool_concurrency;
        let mock = MockExecutor::new()
            .without_call_log()
            .tool(
                TOOL_NAME,
                MockBehavior::Sleep(s.tool_time, "tool result".to_owned()),
            )
            .tool(
                PARALLEL_TOOL_NAME,
                MockBehavior::Sleep(
                    Duration::from_millis(PARALLEL_TOOL_MS),
                    "tool result".to_owned(),
                ),
            );
        let (stop, stopped) = oneshot::channel::<()>();
        let nodelay = s.windlass_nodelay;
        // The shipped caps (512 responses in flight, 1,024 connections)
        // would refuse part of the idle scenario's streams and of a high
        // --concurrency: raised to what the run opens.
        let mut server_cfg = ServerConfig::default();
        let wanted = s.idle_streams.max(s.concurrency) + 64;
        let c = &mut server_cfg.connections;
        c.max_inflight_responses = c.max_inflight_responses.max(wanted);
        c.max_connections = c.max_connections.max(wanted);
        c.hard_max_connections = c.hard_max_connections.max(wanted + 64);
        let mut store_options = SqliteOptions {
            group_commit: s.group_commit,
            ..SqliteOptions::default()
        };
        if let Some(n) = s.checkpoint_bytes {
            store_options.checkpoint_bytes = n;
        }
        server_cfg.metrics.enabled = s.metrics;
        // As `windlass serve` runs: each connection on a thread of its own.
        server_cfg.connection_threads = s.connection_threads;
        let upstream_addr = upstream.addr();
        let built = wl
            .spawn(async move {
                let provider = Arc::new(
                    ChatCompletionsProvider::new(pcfg).map_err(|e| format!("provider: {e}"))?,
                );
                let store = open_store(&db_str, pg_url.as_deref(), store_options).await?;
                // As `windlass serve` wires it: the store timed when
                // metrics are on.
                let metrics = Metrics::from_config(&server_cfg.metrics);
                let engine = Engine::builder(provider, TimedStore::wrap(store.clone(), &metrics))
                    .config(engine_cfg)
                    .executor(mock.arc())
                    .build();
                let state = AppState::new(engine, server_cfg).with_metrics(metrics);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| format!("bind: {e}"))?;
                let addr: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
                let server = if nodelay {
                    // Diagnostic only (`--windlass-nodelay`): what
                    // `windlass_server::serve` does, plus TCP_NODELAY on
                    // every accepted socket.
                    tokio::spawn(async move {
                        use axum::serve::ListenerExt as _;
                        let listener = listener.tap_io(|tcp| {
                            let _ = tcp.set_nodelay(true);
                        });
                        let inflight = state.inflight.clone();
                        let app = windlass_server::router(state);
                        let shutdown = async move {
                            let _ = stopped.await;
                            inflight.cancel_all();
                        };
                        if let Err(e) = axum::serve(listener, app)
                            .with_graceful_shutdown(shutdown)
                            .await
                        {
                            eprintln!("windlass-bench: windlass server stopped: {e}");
                        }
                    })
                } else {
                    tokio::spawn(async move {
                        let shutdown = async {
                            let _ = stopped.await;
                        };
                        if let Err(e) = windlass_server::serve(listener, state, shutdown).await {
                            eprintln!("windlass-bench: windlass server stopped: {e}");
                        }
                    })
                };
                let relay = crate::relay::start(upstream_addr).await?;
                Ok::<_, String>((store, addr, relay, server))
            })
            .await
            .map_err(|e| format!("windlass start task: {e}"))?;
        let (store, addr, relay, server) = built?;
        Ok(Bench {
            direct_url: format!("{}/chat/completions", upstream.base_url()).into(),
            windlass_url: format!("http://{addr}/v1/responses").into(),
            relay_url: format!("http://{relay}/v1/chat/completions").into(),
            upstream,
            client: client(),
            store,
            tool_concurrency,
            wl,
            db,
            stop: Some(stop),
            server: Some(server),
        })
    }

    /// Stops Windlass and the upstream, removes the SQLite files.
    pub(crate) async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.server.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
        self.upstream.clone().shutdown().await;
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.db.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

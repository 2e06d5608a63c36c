//! `obs-cost`: what request logs and metrics cost per request, measured so
//! that a busy machine does not blur it.
//!
//! One thread does everything (a current-thread tokio runtime: the client,
//! Windlass and the fake upstream; SQLite's writer has its own thread), and
//! requests go one at a time, so the same command does the same work every
//! time. Run it twice under `valgrind --tool=cachegrind` with two request
//! counts: the difference of the two instruction totals divided by the
//! difference of the counts is the instructions per request, start-up
//! excluded, and does not depend on the machine's load
//! (`scripts/obs-cost.sh` does that for each configuration). Without
//! valgrind it prints the process CPU time per request (noisy on a shared
//! machine, but it includes the kernel side of the log writes).
//!
//! `--mode direct` posts the same conversation to the fake upstream without
//! Windlass: subtracting it gives Windlass's own share of a request.

#[allow(dead_code)]
#[path = "../measure.rs"]
mod measure;

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use windlass_engine::{Engine, ResponseStore};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};
use windlass_server::logging::{log_layer, LogFormat};
use windlass_server::{AppState, Metrics, ServerConfig, TimedStore};
use windlass_store::{SqliteOptions, SqliteStore};
use windlass_testkit::{FakeUpstream, Reply};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Through Windlass (stored, SQLite).
    Windlass,
    /// The same request straight to the fake upstream.
    Direct,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Request logs and metrics: cost per request, one request at a time.
#[derive(Debug, Parser)]
#[command(name = "obs-cost")]
struct Args {
    /// Measured requests (after the warm-up).
    #[arg(long, default_value_t = 1000)]
    requests: usize,
    /// Requests before the measured ones.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    #[arg(long, value_enum, default_value_t = Mode::Windlass)]
    mode: Mode,
    /// Streamed requests (`stream: true`, the body read to its end).
    #[arg(long)]
    stream: bool,
    /// Install the log layer `windlass serve` installs (stdout, `RUST_LOG`
    /// or info), in this format.
    #[arg(long, value_enum)]
    log: Option<Format>,
    /// Windlass's Prometheus metrics off (on by default, as in the binary).
    #[arg(long)]
    no_metrics: bool,
    /// A/B of the checkpoint policy: the SQLite store checkpoints once its
    /// WAL holds this many bytes (0: after every commit, at most four times
    /// a second) [default: the store's default].
    #[arg(long)]
    checkpoint_bytes: Option<u64>,
}

const UPKEEP_EVERY: usize = 1000;

const ANSWER: &str = "Hello! This is a short answer from the fake upstream model.";

fn main() -> Result<(), String> {
    let args = Args::parse();
    if let Some(format) = args.log {
        let format = match format {
            Format::Text => LogFormat::Text,
            Format::Json => LogFormat::Json,
        };
        tracing_subscriber::registry()
            .with(log_layer(format))
            .try_init()
            .map_err(|e| e.to_string())?;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(run(args))
}

async fn run(args: Args) -> Result<(), String> {
    let upstream = FakeUpstream::start().await;
    upstream.set_record_requests(false);
    upstream.set_default(Reply::text(ANSWER));
    let db = std::env::temp_dir().join(format!("windlass-obs-cost-{}.db", std::process::id()));
    let metrics = Metrics::from_config(&windlass_server::MetricsConfig {
        enabled: !args.no_metrics,
        ..Default::default()
    });
    let url = match args.mode {
        Mode::Direct => format!("{}/chat/completions", upstream.base_url()),
        Mode::Windlass => start_windlass(&upstream, &db, &metrics, args.checkpoint_bytes).await?,
    };
    let body = match args.mode {
        Mode::Direct => json!({"model": "fake-model", "stream": args.stream,
            "messages": [{"role": "user", "content": "Say hello."}]}),
        Mode::Windlass => json!({"model": "fake-model", "stream": args.stream,
            "input": "Say hello."}),
    }
    .to_string();
    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .map_err(|e| e.to_string())?;
    for _ in 0..args.warmup {
        one(&client, &url, &body).await?;
    }
    let (cpu, wall) = (measure::process_cpu(), Instant::now());
    for n in 1..=args.requests {
        one(&client, &url, &body).await?;
        // `windlass serve` folds histograms every 5 s; here every 1000
        // requests (200 requests/s), so the count does not depend on how
        // fast this machine (or valgrind) runs.
        if n % UPKEEP_EVERY == 0 {
            metrics.run_upkeep();
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e6 / args.requests.max(1) as f64;
    eprintln!(
        "obs-cost: {} requests, process CPU {:.1} us/request, wall {:.1} us/request",
        args.requests,
        per(measure::process_cpu() - cpu),
        per(wall.elapsed())
    );
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// One request, its body read to the end; anything but a 200 is an error.
async fn one(client: &reqwest::Client, url: &str, body: &str) -> Result<(), String> {
    let resp = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let text = resp.bytes().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {}", String::from_utf8_lossy(&text)));
    }
    Ok(())
}

/// Windlass as `windlass serve` wires it (SQLite store, timed when metrics
/// are on), listening on loopback; returns its `/v1/responses` URL. Served
/// through its router, without the timer-driven metrics upkeep of
/// `windlass_server::serve` (the request loop runs it instead).
async fn start_windlass(
    upstream: &FakeUpstream,
    db: &std::path::Path,
    metrics: &Metrics,
    checkpoint_bytes: Option<u64>,
) -> Result<String, String> {
    let mut pcfg = ChatProviderConfig::new(upstream.base_url());
    pcfg.max_retries = 0;
    let provider =
        Arc::new(ChatCompletionsProvider::new(pcfg).map_err(|e| format!("provider: {e}"))?);
    let path = db.to_str().ok_or("temp path is not UTF-8")?;
    let mut options = SqliteOptions::default();
    if let Some(n) = checkpoint_bytes {
        options.checkpoint_bytes = n;
    }
    let store: Arc<dyn ResponseStore> = Arc::new(
        SqliteStore::open_with(path, options)
            .await
            .map_err(|e| format!("sqlite: {e}"))?,
    );
    let mut config = ServerConfig::default();
    config.metrics.enabled = metrics.is_enabled();
    let engine = Engine::builder(provider, TimedStore::wrap(store, metrics)).build();
    let app = windlass_server::router(AppState::new(engine, config).with_metrics(metrics.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("obs-cost: windlass stopped: {e}");
        }
    });
    Ok(format!("http://{addr}/v1/responses"))
}

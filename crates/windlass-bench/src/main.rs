//! `windlass-bench`: the overhead Windlass adds, measured against the same
//! fake upstream reached directly (the zero-overhead limit), in one run.
//!
//! Windlass runs in this process on its own tokio runtime (threads
//! `windlass-rt*`, SQLite included), the fake upstream and
//! the load generator on another one. Every scenario alternates direct and
//! Windlass phases (`--rounds`, 3 by default) and reports medians, p99s,
//! differences and ratios. See BENCHMARKS.md for the method.

mod env;
mod load;
mod measure;
mod relay;
mod report;
mod scenarios;
mod stats;
mod timings;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use serde_json::{json, Value};

use crate::env::Bench;
use crate::report::Row;

#[global_allocator]
static GLOBAL: measure::CountingAlloc = measure::CountingAlloc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// Every scenario below, in this order.
    All,
    /// Stored non-streaming request, one turn.
    Json,
    /// Streamed reply of `--tokens` tokens.
    Stream,
    /// Agentic loop: `--turns` turns of `--tool-calls` parallel server-side calls.
    Loop,
    /// One turn of 8 parallel server-side tool calls of 200 ms (issue 3).
    Tools,
    /// `previous_response_id` chain of `--chain-depth`.
    Chain,
    /// `--idle-streams` concurrent idle streams: memory per open stream.
    Idle,
}

/// Measure Windlass against the same upstream reached directly.
#[derive(Debug, Clone, Parser)]
#[command(name = "windlass-bench", version)]
pub struct Args {
    /// Which scenario to run.
    #[arg(long, value_enum, default_value_t = Scenario::All)]
    pub scenario: Scenario,
    /// Length of each measured phase (one mode, one round) [default: 5, quick: 0.2].
    #[arg(long)]
    pub duration_secs: Option<f64>,
    /// Concurrent client workers (json, stream and loop scenarios).
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Direct/Windlass alternations per scenario [default: 3, quick: 1].
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Everything in a few seconds (CI smoke; figures are not meaningful).
    #[arg(long)]
    pub quick: bool,
    /// Print the results as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Upstream time to first byte / first token, in ms.
    #[arg(long, default_value_t = 20)]
    pub upstream_ms: u64,
    /// Tokens per streamed reply (4 characters each).
    #[arg(long, default_value_t = 256)]
    pub tokens: usize,
    /// Upstream delay between two streamed tokens, in µs (0: as fast as possible).
    #[arg(long, default_value_t = 1000)]
    pub token_delay_us: u64,
    /// Model turns of the agentic loop (each with tool calls).
    #[arg(long, default_value_t = 3)]
    pub turns: u32,
    /// Parallel server-side tool calls per turn.
    #[arg(long, default_value_t = 4)]
    pub tool_calls: usize,
    /// Windlass's `tool_concurrency` [default: the engine's default, or
    /// `--tool-calls` if that is higher].
    #[arg(long)]
    pub tool_concurrency: Option<usize>,
    /// Duration of one tool call, in ms.
    #[arg(long, default_value_t = 50)]
    pub tool_ms: u64,
    /// json scenario: the prompt padded to this many bytes (0: a short prompt).
    #[arg(long, default_value_t = 0)]
    pub input_bytes: usize,
    /// json scenario: every request continues a stored history of this many
    /// items (0: none).
    #[arg(long, default_value_t = 0)]
    pub history_items: usize,
    /// Depth of the `previous_response_id` chain.
    #[arg(long, default_value_t = 100)]
    pub chain_depth: usize,
    /// Concurrent idle streams [default: 1000, quick: 100].
    #[arg(long)]
    pub idle_streams: Option<usize>,
    /// Worker threads of Windlass's runtime (the `windlass` binary uses one per core).
    #[arg(long)]
    pub windlass_threads: Option<usize>,
    /// Worker threads of the load generator's and upstream's runtime.
    #[arg(long)]
    pub client_threads: Option<usize>,
    /// Install an info-level tracing subscriber (output discarded), as the
    /// `windlass` binary logs at info by default.
    #[arg(long)]
    pub log: bool,
    /// Turn Windlass's Prometheus metrics off (`[server.metrics] enabled =
    /// false`); they are on by default, as in the `windlass` binary.
    #[arg(long)]
    pub no_metrics: bool,
    /// Diagnostic: serve Windlass's router with TCP_NODELAY on accepted
    /// sockets (what `windlass_server::serve` does not do today) to show the
    /// effect of Nagle's algorithm on streamed events.
    #[arg(long)]
    pub windlass_nodelay: bool,
    /// A/B: one commit per save instead of SQLite group commit (the store's
    /// default).
    #[arg(long)]
    pub no_group_commit: bool,
    /// A/B: the SQLite store checkpoints once its WAL holds this many bytes
    /// [default: the store's default; 0: after every commit, at most four
    /// times a second, as before the latency round].
    #[arg(long)]
    pub checkpoint_bytes: Option<u64>,
    /// Diagnostic: the json and stream scenarios send `store: false`, to
    /// separate the cost of persistence from the rest.
    #[arg(long)]
    pub unstored: bool,
    /// Store responses in this Postgres database (postgres://...) instead
    /// of a temp SQLite file. Its tables are emptied first (point it at a
    /// scratch database).
    #[arg(long, env = "WINDLASS_BENCH_DB")]
    pub db: Option<String>,
}

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub quick: bool,
    pub duration: Duration,
    /// Phase length of the stored JSON and stream measurements, whose p99
    /// every run reports (`--quick` makes them 1 s, not 0.2 s, so a tail
    /// of one request in a hundred shows in CI's smoke run too).
    pub tail_phase: Duration,
    pub warmup: Duration,
    pub rounds: usize,
    pub concurrency: usize,
    pub upstream_delay: Duration,
    pub tokens: usize,
    pub token_delay: Duration,
    pub turns: u32,
    pub tool_calls: usize,
    pub tool_concurrency: Option<usize>,
    pub tool_time: Duration,
    pub chain_depth: usize,
    pub input_bytes: usize,
    pub history_items: usize,
    pub idle_streams: usize,
    pub load_context_iters: usize,
    pub windlass_nodelay: bool,
    pub group_commit: bool,
    pub checkpoint_bytes: Option<u64>,
    /// `store` flag of the json and stream scenarios' requests.
    pub store: bool,
    /// Windlass records metrics.
    pub metrics: bool,
    /// How long the idle scenario waits for the upstream streams to be released.
    pub release_timeout: Duration,
    /// A Postgres URL; `None`: a temp SQLite file.
    pub db: Option<String>,
}

impl Settings {
    fn from(a: &Args) -> Settings {
        let duration = Duration::from_secs_f64(
            a.duration_secs
                .unwrap_or(if a.quick { 0.2 } else { 5.0 })
                .max(0.05),
        );
        Settings {
            quick: a.quick,
            duration,
            tail_phase: match (a.quick, a.duration_secs) {
                (true, None) => Duration::from_secs(1),
                _ => duration,
            },
            warmup: if a.quick {
                Duration::ZERO
            } else {
                (duration / 5).clamp(Duration::from_millis(200), Duration::from_secs(2))
            },
            rounds: a.rounds.unwrap_or(if a.quick { 1 } else { 3 }).max(1),
            concurrency: a.concurrency.max(1),
            upstream_delay: Duration::from_millis(a.upstream_ms),
            tokens: a.tokens.max(1),
            token_delay: Duration::from_micros(a.token_delay_us),
            turns: a.turns.max(1),
            tool_calls: a.tool_calls.max(1),
            tool_concurrency: a.tool_concurrency.map(|n| n.max(1)),
            tool_time: Duration::from_millis(a.tool_ms),
            chain_depth: a.chain_depth.max(1),
            input_bytes: a.input_bytes,
            history_items: a.history_items,
            idle_streams: a
                .idle_streams
                .unwrap_or(if a.quick { 100 } else { 1000 })
                .max(1),
            load_context_iters: if a.quick { 20 } else { 300 },
            windlass_nodelay: a.windlass_nodelay,
            group_commit: !a.no_group_commit,
            checkpoint_bytes: a.checkpoint_bytes,
            store: !a.unstored,
            metrics: !a.no_metrics,
            release_timeout: Duration::from_secs(if a.quick { 1 } else { 5 }),
            db: a.db.clone(),
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let settings = Settings::from(&args);
    install_subscriber(args.log);
    let wl_threads = args.windlass_threads.unwrap_or_else(cores).max(1);
    let client_threads = args.client_threads.unwrap_or_else(cores).max(1);
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(client_threads)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .expect("client runtime");
    let wl_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(wl_threads)
        .thread_name(measure::WINDLASS_THREAD)
        .enable_all()
        .build()
        .expect("windlass runtime");
    let handle = wl_rt.handle().clone();
    let result = client_rt.block_on(run(args.clone(), settings.clone(), handle, wl_threads));
    // Dropping a runtime from inside another one panics: both are dropped here.
    wl_rt.shutdown_timeout(Duration::from_secs(5));
    client_rt.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("windlass-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The store's save timings are always collected (`timings.rs`; only their
/// own debug target is enabled); `--log` adds an info-level log written to
/// a sink, as the `windlass` binary logs at info.
fn install_subscriber(log: bool) {
    use tracing_subscriber::filter::{EnvFilter, Targets};
    use tracing_subscriber::prelude::*;
    let timing = timings::Collector.with_filter(
        Targets::new().with_target(windlass_store::SAVE_TIMING_TARGET, tracing::Level::DEBUG),
    );
    let log = log.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::sink)
            .with_filter(EnvFilter::new("info"))
    });
    let _ = tracing_subscriber::registry()
        .with(timing)
        .with(log)
        .try_init();
}

/// Progress line on stderr.
pub fn progress(msg: impl AsRef<str>) {
    eprintln!("[windlass-bench] {}", msg.as_ref());
}

async fn run(
    args: Args,
    s: Settings,
    wl: tokio::runtime::Handle,
    wl_threads: usize,
) -> Result<(), String> {
    let bench = Bench::start(&s, wl).await?;
    progress(format!(
        "upstream {}  windlass {}  ({} s per phase, {} round(s), concurrency {})",
        bench.direct_url,
        bench.windlass_url,
        s.duration.as_secs_f64(),
        s.rounds,
        s.concurrency
    ));
    let all = args.scenario == Scenario::All;
    let mut rows: Vec<Row> = Vec::new();
    let mut details = serde_json::Map::new();
    let started = std::time::Instant::now();
    let mut outcome: Result<(), String> = Ok(());
    for (scenario, name) in [
        (Scenario::Json, "json"),
        (Scenario::Stream, "stream"),
        (Scenario::Loop, "loop"),
        (Scenario::Tools, "tools"),
        (Scenario::Chain, "chain"),
        (Scenario::Idle, "idle"),
    ] {
        if !(all || args.scenario == scenario) {
            continue;
        }
        progress(format!(
            "scenario {name} (at {:.1} s)",
            started.elapsed().as_secs_f64()
        ));
        let r = match scenario {
            Scenario::Json => scenarios::json::run(&bench, &s).await,
            Scenario::Stream => scenarios::stream::run(&bench, &s).await,
            Scenario::Loop => scenarios::agent_loop::run(&bench, &s).await,
            Scenario::Tools => scenarios::parallel_tools::run(&bench, &s).await,
            Scenario::Chain => scenarios::chain::run(&bench, &s).await,
            Scenario::Idle => scenarios::idle::run(&bench, &s).await,
            Scenario::All => unreachable!(),
        };
        match r {
            Ok((mut r, d)) => {
                rows.append(&mut r);
                details.insert(name.to_owned(), d);
            }
            Err(e) => {
                outcome = Err(format!("scenario {name}: {e}"));
                break;
            }
        }
    }
    bench.stop().await;

    let meta = json!({
        "date_utc_unix": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        "cpus": cores(),
        "windlass_threads": wl_threads,
        "quick": s.quick,
        "rounds": s.rounds,
        "phase_secs": s.duration.as_secs_f64(),
        "concurrency": s.concurrency,
        "upstream_ms": s.upstream_delay.as_secs_f64() * 1000.0,
        "tokens": s.tokens,
        "token_delay_us": s.token_delay.as_micros() as u64,
        "turns": s.turns,
        "tool_calls": s.tool_calls,
        "tool_concurrency": s.tool_concurrency,
        "tool_ms": s.tool_time.as_secs_f64() * 1000.0,
        "chain_depth": s.chain_depth,
        "input_bytes": s.input_bytes,
        "history_items": s.history_items,
        "idle_streams": s.idle_streams,
        "log": args.log,
        "windlass_nodelay": s.windlass_nodelay,
        "store": s.store,
        "group_commit": s.group_commit,
        "checkpoint_bytes": s.checkpoint_bytes,
        "loadavg": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "elapsed_secs": started.elapsed().as_secs_f64(),
    });
    let header = format!(
        "windlass-bench: {} CPU(s), Windlass on {} thread(s), {} round(s) x {:.1} s per mode, concurrency {}{}{}{}{}  (loadavg {})",
        cores(),
        wl_threads,
        s.rounds,
        s.duration.as_secs_f64(),
        s.concurrency,
        if s.quick { ", QUICK (smoke only)" } else { "" },
        if args.log { ", info logging" } else { "" },
        if s.windlass_nodelay { ", DIAGNOSTIC: TCP_NODELAY on Windlass's sockets" } else { "" },
        if s.store { "" } else { ", DIAGNOSTIC: json/stream requests with store:false" },
        meta["loadavg"].as_str().unwrap_or(""),
    );
    let mut table = report::table(&header, &rows);
    table.push_str(&report::tail_summary(&rows));
    if args.json {
        eprint!("{table}");
        let doc = report::json(meta, &rows, Value::Object(details));
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print!("{table}");
    }
    progress(format!("done in {:.1} s", started.elapsed().as_secs_f64()));
    outcome
}

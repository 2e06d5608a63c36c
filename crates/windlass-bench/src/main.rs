//! `windlass-bench`: the overhead Windlass adds, measured against the same
//! fake upstream reached directly (the zero-overhead limit), in one run.
//!
//! Windlass runs in this process on its own tokio runtime (threads
//! `windlass-rt*`, SQLite included), the fake upstream and
//! the load generator on another one. Every scenario alternates direct and
//! Windlass phases (`--rounds`, 3 by default) and reports medians, p99s,
//! differences and ratios. See BENCHMARKS.md for the method.

// A measuring harness run by hand and in CI's smoke run, never product code:
// a setup it cannot build panics with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod env;
mod load;
mod measure;
mod relay;
mod report;
mod scenarios;
mod settings;
mod stats;
mod timings;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde_json::{json, Value};

use crate::env::Bench;
use crate::report::{progress, Row};
use crate::settings::{cores, Args, Scenario, Settings};

#[global_allocator]
static GLOBAL: measure::CountingAlloc = measure::CountingAlloc;

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
        "connection_threads": s.connection_threads,
        "store": s.store,
        "group_commit": s.group_commit,
        "checkpoint_bytes": s.checkpoint_bytes,
        "loadavg": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "elapsed_secs": started.elapsed().as_secs_f64(),
    });
    let header = format!(
        "windlass-bench: {} CPU(s), Windlass on {} thread(s) and {} connection thread(s), {} round(s) x {:.1} s per mode, concurrency {}{}{}{}{}  (loadavg {})",
        cores(),
        wl_threads,
        s.connection_threads,
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

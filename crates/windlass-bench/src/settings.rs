//! The command line (`Args`) and the settings resolved from it, which
//! every scenario reads; a leaf module, so the scenarios never import
//! `main.rs`.

use std::time::Duration;

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scenario {
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
pub(crate) struct Args {
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
    /// Worker threads of Windlass's runtime, and as many connection threads
    /// (the `windlass` binary uses one per core of each).
    #[arg(long)]
    pub windlass_threads: Option<usize>,
    /// A/B: serve connections on the work-stealing runtime itself
    /// (`[server] connection_threads = 0`) instead of connection threads.
    #[arg(long)]
    pub work_stealing: bool,
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
pub(crate) struct Settings {
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
    /// `[server] connection_threads` of Windlass (0 with `--work-stealing`).
    pub connection_threads: usize,
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
    pub(crate) fn from(a: &Args) -> Settings {
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
            connection_threads: match a.work_stealing {
                true => 0,
                false => a.windlass_threads.unwrap_or_else(cores).max(1),
            },
            group_commit: !a.no_group_commit,
            checkpoint_bytes: a.checkpoint_bytes,
            store: !a.unstored,
            metrics: !a.no_metrics,
            release_timeout: Duration::from_secs(if a.quick { 1 } else { 5 }),
            db: a.db.clone(),
        }
    }
}

/// CPUs of this machine (2 when unknown).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

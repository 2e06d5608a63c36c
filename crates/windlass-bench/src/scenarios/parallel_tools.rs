//! Issue 3's example, measured: one turn with 8 server-side tool calls of
//! 200 ms each must finish well under 400 ms (i.e. the calls run in
//! parallel, not two at a time or one by one).
//!
//! One request at a time (the fake upstream's script queue is global): the
//! upstream answers the first model call with 8 tool calls of the
//! `PARALLEL_TOOL_NAME` tool (a `MockExecutor` sleeping 200 ms) and the
//! second with a short text, without delays, so the request's wall time is
//! the tool round plus Windlass's own work (two model calls, one save).
//! Windlass runs with the engine's default `tool_concurrency` unless the
//! loop scenario's `--tool-calls` asks for more (see `env.rs`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use windlass_engine::EngineConfig;
use windlass_testkit::{Reply, ToolCallSpec};

use super::{check_windlass, count_output, Outcome, MODEL};
use crate::env::{Bench, PARALLEL_TOOL_MS, PARALLEL_TOOL_NAME};
use crate::load::ms;
use crate::report::progress;
use crate::report::Row;
use crate::settings::Settings;
use crate::stats::Dist;

/// Tool calls in the turn (the figure).
pub(crate) const CALLS: usize = 8;

/// "Well under" the 400 ms that two sequential waves of 200 ms would take.
const TARGET_MS: f64 = 300.0;

/// One request: its wall time, after checking it ran every call once.
async fn one(bench: &Bench, body: &Value) -> Result<f64, String> {
    let calls = (0..CALLS).map(|i| ToolCallSpec::new(PARALLEL_TOOL_NAME, format!("{{\"i\":{i}}}")));
    bench.upstream.push_all([
        Reply::tool_calls(calls),
        Reply::text("All eight tools answered."),
    ]);
    let start = Instant::now();
    let response = check_windlass(bench, body).await?;
    let wall = ms(start.elapsed());
    let outputs = count_output(&response, "function_call_output");
    if response["status"] != "completed" || outputs != CALLS {
        return Err(format!(
            "expected a completed response with {CALLS} tool outputs, got {} with {outputs}",
            response["status"]
        ));
    }
    Ok(wall)
}

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    let body = json!({
        "model": MODEL,
        "input": "Call the tool eight times at once, then answer.",
        "store": true,
        "tools": [{
            "type": "function",
            "name": PARALLEL_TOOL_NAME,
            "description": "Sleeps 200 ms, then returns.",
            "parameters": {"type": "object", "properties": {"i": {"type": "integer"}}},
        }],
    });
    // Warm-up (connections, prepared statements), not measured.
    one(bench, &body).await?;
    let runs = if s.quick { 2 } else { 20 };
    let mut walls = Vec::with_capacity(runs);
    for _ in 0..runs {
        walls.push(one(bench, &body).await?);
    }
    let dist = Dist::of(walls.iter().copied());
    let max = walls.iter().copied().fold(0.0, f64::max);
    progress(format!(
        "  tools: {runs} turns of {CALLS} x {PARALLEL_TOOL_MS} ms calls, tool_concurrency {}: p50 {:.1} ms, max {max:.1} ms",
        bench.tool_concurrency, dist.p50
    ));
    let nominal = Duration::from_millis(PARALLEL_TOOL_MS).as_secs_f64() * 1000.0;
    let rows = vec![
        Row::value(
            "tools",
            &format!("{CALLS} x {PARALLEL_TOOL_MS} ms calls, one turn: wall p50"),
            "ms",
            dist.p50,
        )
        .target_max(TARGET_MS),
        Row::value("tools", "  same, max", "ms", max).target_max(TARGET_MS),
        Row::value(
            "tools",
            "  beyond one 200 ms wave p50 (model calls, save)",
            "ms",
            dist.p50 - nominal,
        ),
        Row::value(
            "tools",
            &format!(
                "tool_concurrency used (engine default {})",
                EngineConfig::default().tool_concurrency
            ),
            "count",
            bench.tool_concurrency as f64,
        ),
    ];
    let details = json!({
        "calls": CALLS,
        "tool_ms": PARALLEL_TOOL_MS,
        "tool_concurrency": bench.tool_concurrency,
        "engine_default_tool_concurrency": EngineConfig::default().tool_concurrency,
        "runs": runs,
        "wall_ms": dist,
        "wall_ms_max": max,
        "target_ms": TARGET_MS,
    });
    Ok((rows, details))
}

//! Agentic loop: `turns` model turns, each answered with `tool_calls`
//! parallel server-side tool calls of `tool_ms`, run by Windlass (a
//! `MockExecutor` sleeping) — against a client running the same loop itself
//! directly against the upstream (model call, the calls' sleeps in parallel,
//! next model call with the results).
//!
//! The upstream always answers with tool calls and Windlass's
//! `max_agentic_turns` equals `turns`, so every response is exactly `turns`
//! model turns and `turns` tool rounds (it ends `incomplete`/`max_turns`);
//! this keeps the script valid at any concurrency (the fake upstream's
//! script queue is global).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};
use windlass_testkit::{Reply, ToolCallSpec};

use super::{alternate, check_windlass, count_output, latency_rows, requests, Outcome, MODEL};
use crate::env::{Bench, TOOL_NAME};
use crate::load::{ms, post_json, Sample};
use crate::report::Row;
use crate::settings::Settings;

const PROMPT: &str = "Run the tools, then answer.";

fn parameters() -> Value {
    json!({"type": "object", "properties": {"i": {"type": "integer"}}})
}

/// The client-side loop against the upstream: the zero-overhead limit.
async fn direct_loop(
    client: reqwest::Client,
    url: Arc<str>,
    turns: u32,
    tool_time: Duration,
    tools: Arc<Value>,
) -> Sample {
    let start = Instant::now();
    let failed = || Sample {
        ok: false,
        total_ms: ms(start.elapsed()),
        ..Sample::default()
    };
    let mut messages = vec![json!({"role": "user", "content": PROMPT})];
    for _ in 0..turns {
        let body = json!({"model": MODEL, "messages": messages, "tools": *tools});
        let Ok(resp) = client.post(&*url).json(&body).send().await else {
            return failed();
        };
        if !resp.status().is_success() {
            return failed();
        }
        let Ok(mut v) = resp.json::<Value>().await else {
            return failed();
        };
        let msg = v["choices"][0]["message"].take();
        let calls = msg["tool_calls"].as_array().cloned().unwrap_or_default();
        if calls.is_empty() {
            return failed();
        }
        messages.push(msg);
        futures::future::join_all(calls.iter().map(|_| tokio::time::sleep(tool_time))).await;
        for c in calls {
            messages
                .push(json!({"role": "tool", "tool_call_id": c["id"], "content": "tool result"}));
        }
    }
    Sample {
        ok: true,
        total_ms: ms(start.elapsed()),
        ..Sample::default()
    }
}

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    let calls: Vec<ToolCallSpec> = (0..s.tool_calls)
        .map(|i| ToolCallSpec::new(TOOL_NAME, format!("{{\"i\":{i}}}")))
        .collect();
    bench
        .upstream
        .set_default(Reply::tool_calls(calls).first_byte_delay(s.upstream_delay));

    let wl_body = json!({
        "model": MODEL,
        "input": PROMPT,
        "store": true,
        "tools": [{"type": "function", "name": TOOL_NAME, "description": "Sleeps, then returns.", "parameters": parameters()}],
    });
    let checked = check_windlass(bench, &wl_body).await?;
    let outputs = count_output(&checked, "function_call_output");
    let expected = s.turns as usize * s.tool_calls;
    if outputs != expected || checked["incomplete_details"]["reason"] != "max_turns" {
        return Err(format!(
            "loop check: expected {expected} tool outputs and incomplete/max_turns, got {outputs}: {}",
            checked["incomplete_details"]
        ));
    }

    let tools = Arc::new(json!([{
        "type": "function",
        "function": {"name": TOOL_NAME, "description": "Sleeps, then returns.", "parameters": parameters()},
    }]));
    let (client, url, turns, tool_time) = (
        bench.client.clone(),
        bench.direct_url.clone(),
        s.turns,
        s.tool_time,
    );
    let direct = move || direct_loop(client.clone(), url.clone(), turns, tool_time, tools.clone());
    let (client, url, body) = (
        bench.client.clone(),
        bench.windlass_url.clone(),
        Bytes::from(wl_body.to_string()),
    );
    let windlass = move || post_json(client.clone(), url.clone(), body.clone());

    let r = alternate("loop", s, s.concurrency, s.duration, direct, windlass).await?;

    let turns = f64::from(s.turns);
    let nominal = turns * (s.upstream_delay.as_secs_f64() + s.tool_time.as_secs_f64()) * 1000.0;
    let d = r.pooled(false, |x| x.total_ms);
    let w = r.pooled(true, |x| x.total_ms);
    let (p50, p99) = latency_rows("loop", "loop latency", &r, |x| x.total_ms);
    let cpu_loop = r.cpu_threads_us(requests);
    let rows = vec![
        p50,
        p99,
        Row::overhead(
            "loop",
            "overhead per turn p50 (vs direct loop)",
            "ms",
            (w.p50 - d.p50) / turns,
        )
        .target_max(1.0),
        Row::overhead(
            "loop",
            "overhead per turn p99 (vs direct loop)",
            "ms",
            (w.p99 - d.p99) / turns,
        ),
        Row::compare(
            "loop",
            "per turn p50 beyond upstream+tool time",
            "ms",
            (d.p50 - nominal) / turns,
            (w.p50 - nominal) / turns,
        ),
        Row::side_by_side("loop", "throughput", "loops/s", r.rate(false), r.rate(true)),
        Row::side_by_side(
            "loop",
            "errors",
            "count",
            r.errors(false) as f64,
            r.errors(true) as f64,
        ),
        Row::overhead("loop", "Windlass CPU/loop (its threads)", "us", cpu_loop),
        Row::overhead(
            "loop",
            "Windlass CPU/turn (its threads)",
            "us",
            cpu_loop / turns,
        ),
        Row::overhead(
            "loop",
            "Windlass context switches/loop",
            "count",
            r.switches_per(requests),
        ),
    ];
    let details = json!({
        "turns": s.turns,
        "tool_calls_per_turn": s.tool_calls,
        "tool_ms": s.tool_time.as_secs_f64() * 1000.0,
        "upstream_ms": s.upstream_delay.as_secs_f64() * 1000.0,
        "nominal_ms": nominal,
        "latency_ms": {"direct": d, "windlass": w},
        "cpu_us_per_loop_windlass_threads": cpu_loop,
        "rounds": r.details(),
    });
    Ok((rows, details))
}

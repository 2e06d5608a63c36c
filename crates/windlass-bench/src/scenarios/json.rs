//! Stored non-streaming request, one turn: the added latency and the CPU
//! Windlass spends per request; then the same direct request through a bare
//! TCP relay on Windlass's runtime (the ceiling of any proxy hop here).
//! `--input-bytes` and `--history-items` shape the request (the cost curve).

use bytes::Bytes;
use serde_json::{json, Value};
use windlass_testkit::Reply;

use super::{alternate, check_windlass, latency_rows, requests, Outcome, MODEL};
use crate::env::Bench;
use crate::load::post_json;
use crate::report::Row;
use crate::settings::Settings;

const ANSWER: &str = "Hello! This is a short answer from the fake upstream model.";

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    bench
        .upstream
        .set_default(Reply::text(ANSWER).first_byte_delay(s.upstream_delay));

    let prompt = super::payload::prompt(s.input_bytes);
    let mut wl_body = json!({"model": MODEL, "input": prompt, "store": s.store});
    let mut messages = Vec::new();
    if s.history_items > 0 {
        let (previous, history) = super::payload::history(bench, s.history_items).await?;
        wl_body["previous_response_id"] = json!(previous);
        messages = history;
    }
    messages.push(json!({"role": "user", "content": prompt}));
    let checked = check_windlass(bench, &wl_body).await?;
    if checked["status"] != "completed" {
        return Err(format!("unexpected windlass response: {checked}"));
    }
    let direct_body = json!({"model": MODEL, "messages": messages});

    let (client, url, body) = (
        bench.client.clone(),
        bench.direct_url.clone(),
        Bytes::from(direct_body.to_string()),
    );
    let direct = move || post_json(client.clone(), url.clone(), body.clone());
    let direct_bytes = body_of(&direct_body);
    let (client, url, body) = (
        bench.client.clone(),
        bench.windlass_url.clone(),
        Bytes::from(wl_body.to_string()),
    );
    let windlass = move || post_json(client.clone(), url.clone(), body.clone());

    crate::timings::reset();
    let r = alternate(
        "json",
        s,
        s.concurrency,
        s.tail_phase,
        direct.clone(),
        windlass,
    )
    .await?;
    let saves = crate::timings::take();

    // The ceiling: the direct request through a bare TCP relay on Windlass's
    // runtime (half the phase length).
    let (client, url) = (bench.client.clone(), bench.relay_url.clone());
    let relay = move || post_json(client.clone(), url.clone(), direct_bytes.clone());
    let half = (s.duration / 2).max(std::time::Duration::from_millis(50));
    let rr = alternate("json-relay", s, s.concurrency, half, direct, relay).await?;

    // The persistence step alone, one at a time, on an idle server.
    let stored = check_windlass(
        bench,
        &json!({"model": MODEL, "input": "Say hello.", "store": true}),
    )
    .await?;
    let template = stored["id"].as_str().ok_or("response without id")?;
    let save = super::chain::save_times(bench, template, s.load_context_iters).await?;

    let (p50, p99) = latency_rows("json", "latency", &r, |x| x.total_ms);
    let cpu_sub = r.cpu_subtraction_us(requests);
    let cpu_thr = r.cpu_threads_us(requests);
    let mut rows = vec![
        p50.target_max(0.5),
        p99.target_max(3.0),
        Row::side_by_side("json", "throughput", "req/s", r.rate(false), r.rate(true)),
        Row::side_by_side(
            "json",
            "errors",
            "count",
            r.errors(false) as f64,
            r.errors(true) as f64,
        ),
        Row::overhead("json", "Windlass CPU/request (subtraction)", "us", cpu_sub)
            .target_max(200.0),
        Row::overhead("json", "Windlass CPU/request (its threads)", "us", cpu_thr),
        Row::value("json", "store.save p50 (direct call, idle)", "ms", save.p50),
        Row::value("json", "store.save p99 (direct call, idle)", "ms", save.p99),
        Row::overhead(
            "json",
            "Windlass context switches/request",
            "count",
            r.switches_per(requests),
        ),
        Row::side_by_side(
            "json",
            "process RSS peak (client+upstream+Windlass)",
            "MiB",
            r.rss_peak_mib(false),
            r.rss_peak_mib(true),
        ),
        Row::side_by_side(
            "json",
            "bare TCP relay: throughput (direct | relay)",
            "req/s",
            rr.rate(false),
            rr.rate(true),
        ),
        Row::overhead(
            "json",
            "bare TCP relay CPU/request (its threads)",
            "us",
            rr.cpu_threads_us(requests),
        ),
        Row::value(
            "json",
            "Windlass throughput / relay throughput",
            "ratio",
            r.rate(true) / rr.rate(true).max(f64::MIN_POSITIVE),
        ),
    ];
    rows.extend(saves.rows("json"));
    let details = json!({
        "save_timings": saves.details(),
        "upstream_ms": s.upstream_delay.as_secs_f64() * 1000.0,
        "concurrency": s.concurrency,
        "input_bytes": s.input_bytes,
        "history_items": s.history_items,
        "rss_peak_mib": {"direct": r.rss_peak_mib(false), "windlass": r.rss_peak_mib(true)},
        "relay": {
            "rate_per_s": {"direct": rr.rate(false), "relay": rr.rate(true)},
            "cpu_us_per_request_threads": rr.cpu_threads_us(requests),
            "latency_ms": rr.pooled(true, |x| x.total_ms),
        },
        "latency_ms": {
            "direct": r.pooled(false, |x| x.total_ms),
            "windlass": r.pooled(true, |x| x.total_ms),
        },
        "cpu_us_per_request": {"subtraction": cpu_sub, "windlass_threads": cpu_thr},
        "store_save_ms": save,
        "windlass_threads_cpu_during_direct_ms": r.idle_windlass_cpu_ms(),
        "rounds": r.details(),
    });
    Ok((rows, details))
}

fn body_of(v: &Value) -> Bytes {
    Bytes::from(v.to_string())
}

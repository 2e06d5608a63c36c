//! Streamed reply of N tokens: added time to first token and to last byte,
//! events per second, Windlass CPU per streamed event.
//!
//! Two parts: "paced" (upstream time to first token and inter-token delay,
//! `--concurrency` streams: latency and CPU) and "burst" (one stream at a
//! time, no upstream delays: the highest event rate of a single stream).

use bytes::Bytes;
use serde_json::json;
use windlass_testkit::Reply;

use super::{alternate, check_windlass, events, latency_rows, requests, Outcome, Rounds, MODEL};
use crate::env::Bench;
use crate::load::{post_stream, TokenMarker};
use crate::report::progress;
use crate::report::Row;
use crate::settings::Settings;
use crate::stats::Dist;

const PROMPT: &str = "Tell me a long story.";

fn reply_text(tokens: usize) -> String {
    // `tokens` pieces of 4 characters (chunk_chars(4)): one SSE chunk each.
    "tok ".repeat(tokens)
}

/// What the second arm of the alternation goes through.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    Windlass,
    /// The direct request through a bare TCP relay (`relay.rs`).
    Relay,
}

async fn measure(
    bench: &Bench,
    s: &Settings,
    label: &str,
    concurrency: usize,
    duration: std::time::Duration,
    via: Via,
) -> Result<Rounds, String> {
    let direct_body = json!({
        "model": MODEL,
        "messages": [{"role": "user", "content": PROMPT}],
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let wl_body = json!({"model": MODEL, "input": PROMPT, "stream": true, "store": s.store});
    let (client, url, body) = (
        bench.client.clone(),
        bench.direct_url.clone(),
        Bytes::from(direct_body.to_string()),
    );
    let direct = move || post_stream(client.clone(), url.clone(), body.clone(), TokenMarker::Chat);
    if via == Via::Relay {
        let (client, url, body) = (
            bench.client.clone(),
            bench.relay_url.clone(),
            Bytes::from(direct_body.to_string()),
        );
        let relay =
            move || post_stream(client.clone(), url.clone(), body.clone(), TokenMarker::Chat);
        return alternate(label, s, concurrency, duration, direct, relay).await;
    }
    let (client, url, body) = (
        bench.client.clone(),
        bench.windlass_url.clone(),
        Bytes::from(wl_body.to_string()),
    );
    let windlass = move || {
        post_stream(
            client.clone(),
            url.clone(),
            body.clone(),
            TokenMarker::Responses,
        )
    };
    alternate(label, s, concurrency, duration, direct, windlass).await
}

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    let text = reply_text(s.tokens);
    let mut paced = Reply::text(text.clone())
        .chunk_chars(4)
        .first_byte_delay(s.upstream_delay);
    if !s.token_delay.is_zero() {
        paced = paced.delay_between_chunks(s.token_delay);
    }
    bench.upstream.set_default(paced);

    // One non-streamed check that the reply comes through whole.
    let checked = check_windlass(bench, &json!({"model": MODEL, "input": PROMPT})).await?;
    let out = checked["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    if out.len() != text.len() {
        return Err(format!(
            "windlass returned {} characters, expected {}",
            out.len(),
            text.len()
        ));
    }

    crate::timings::reset();
    let p = measure(
        bench,
        s,
        "stream",
        s.concurrency,
        s.tail_phase,
        Via::Windlass,
    )
    .await?;
    let saves = crate::timings::take();
    progress("  stream through a bare TCP relay (the floor for any proxy hop)");
    let half = s.duration / 2;
    let pr = measure(bench, s, "stream-relay", s.concurrency, half, Via::Relay).await?;

    progress("  stream burst: one stream at a time, no upstream delays");
    bench.upstream.set_default(Reply::text(text).chunk_chars(4));
    let b = measure(bench, s, "stream-burst", 1, half, Via::Windlass).await?;
    let br = measure(bench, s, "stream-burst-relay", 1, half, Via::Relay).await?;

    let (ttft50, ttft99) = latency_rows("stream", "time to first token", &p, |x| x.ttft_ms);
    let (ttlb50, ttlb99) = latency_rows("stream", "time to last byte", &p, |x| x.total_ms);
    let (hdr50, _) = latency_rows("stream", "time to headers", &p, |x| x.ttfb_ms);
    let ev_d = p.pooled(false, |x| f64::from(x.events)).p50;
    let ev_w = p.pooled(true, |x| f64::from(x.events)).p50;
    let cpu_ev_sub = p.cpu_subtraction_us(events);
    let cpu_ev_thr = p.cpu_threads_us(events);
    let cpu_req_thr = p.cpu_threads_us(requests);
    let per_stream_rate = |x: &crate::load::Sample| f64::from(x.events) / x.total_ms * 1000.0;
    let burst_rate_d = b.pooled(false, per_stream_rate);
    let burst_rate_w = b.pooled(true, per_stream_rate);
    let burst_cpu_ev = b.cpu_threads_us(events);
    let burst_cpu_ev_sub = b.cpu_subtraction_us(events);
    let (burst_ttlb, _) = latency_rows("stream", "burst: time to last byte", &b, |x| x.total_ms);

    let mut rows = vec![
        ttft50.target_max(0.5),
        ttft99,
        ttlb50,
        ttlb99,
        hdr50,
        Row::side_by_side("stream", "events per stream", "count", ev_d, ev_w),
        Row::side_by_side(
            "stream",
            "events delivered (all streams)",
            "ev/s",
            p.event_rate(false),
            p.event_rate(true),
        ),
        Row::side_by_side(
            "stream",
            "errors",
            "count",
            p.errors(false) as f64,
            p.errors(true) as f64,
        ),
        Row::overhead(
            "stream",
            "Windlass CPU/event (subtraction)",
            "us",
            cpu_ev_sub,
        )
        .target_max(5.0),
        Row::overhead(
            "stream",
            "Windlass CPU/event (its threads)",
            "us",
            cpu_ev_thr,
        ),
        Row::overhead(
            "stream",
            "Windlass CPU/stream (its threads)",
            "us",
            cpu_req_thr,
        ),
        Row::overhead(
            "stream",
            "bare TCP relay CPU/event (its threads)",
            "us",
            pr.cpu_threads_us(events),
        ),
        Row::overhead(
            "stream",
            "Windlass context switches/event",
            "count",
            p.switches_per(events),
        ),
        Row::side_by_side(
            "stream",
            "burst: events/s of one stream p50",
            "ev/s",
            burst_rate_d.p50,
            burst_rate_w.p50,
        ),
        burst_ttlb,
        Row::overhead(
            "stream",
            "burst: Windlass CPU/event (subtraction)",
            "us",
            burst_cpu_ev_sub,
        ),
        Row::overhead(
            "stream",
            "burst: Windlass CPU/event (its threads)",
            "us",
            burst_cpu_ev,
        ),
        Row::overhead(
            "stream",
            "burst: bare TCP relay CPU/event (its threads)",
            "us",
            br.cpu_threads_us(events),
        ),
    ];
    rows.extend(saves.rows("stream"));
    let details = json!({
        "save_timings": saves.details(),
        "tokens": s.tokens,
        "upstream_ms": s.upstream_delay.as_secs_f64() * 1000.0,
        "token_delay_us": s.token_delay.as_micros() as u64,
        "concurrency": s.concurrency,
        "paced": {
            "ttft_ms": {"direct": p.pooled(false, |x| x.ttft_ms), "windlass": p.pooled(true, |x| x.ttft_ms)},
            "ttlb_ms": {"direct": p.pooled(false, |x| x.total_ms), "windlass": p.pooled(true, |x| x.total_ms)},
            "headers_ms": {"direct": p.pooled(false, |x| x.ttfb_ms), "windlass": p.pooled(true, |x| x.ttfb_ms)},
            "cpu_us_per_event": {"subtraction": cpu_ev_sub, "windlass_threads": cpu_ev_thr},
            "cpu_us_per_stream_windlass_threads": cpu_req_thr,
            "windlass_threads_cpu_during_direct_ms": p.idle_windlass_cpu_ms(),
            "rounds": p.details(),
        },
        "burst": {
            "events_per_s_one_stream": {"direct": burst_rate_d, "windlass": burst_rate_w},
            "ttlb_ms": {"direct": b.pooled(false, |x| x.total_ms), "windlass": b.pooled(true, |x| x.total_ms)},
            "cpu_us_per_event": {"subtraction": burst_cpu_ev_sub, "windlass_threads": burst_cpu_ev},
            "rounds": b.details(),
        },
        "relay": {
            "paced_cpu_us_per_event": {"subtraction": pr.cpu_subtraction_us(events), "threads": pr.cpu_threads_us(events)},
            "burst_cpu_us_per_event": {"subtraction": br.cpu_subtraction_us(events), "threads": br.cpu_threads_us(events)},
            "paced_ttft_added_ms": pr.pooled(true, |x| x.ttft_ms).p50 - pr.pooled(false, |x| x.ttft_ms).p50,
        },
        "events_per_stream": {"direct": Dist::of(p.direct.iter().flat_map(|x| x.ok()).map(|x| f64::from(x.events))).p50, "windlass": ev_w},
    });
    Ok((rows, details))
}

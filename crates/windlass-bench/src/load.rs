//! The load generator: N worker tasks looping until a deadline, and the
//! HTTP requests they make (timed from the client's side).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::CONTENT_TYPE;

use crate::measure::CpuMark;

/// One timed request, as the client saw it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sample {
    pub ok: bool,
    /// Send to end of body.
    pub total_ms: f64,
    /// Send to response headers.
    pub ttfb_ms: f64,
    /// Send to the first byte of the first token (streams only).
    pub ttft_ms: f64,
    /// SSE events received (streams only).
    pub events: u32,
}

impl Sample {
    fn failed(start: Instant) -> Sample {
        Sample {
            ok: false,
            total_ms: ms(start.elapsed()),
            ..Sample::default()
        }
    }
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Everything measured during one phase (one mode, one round).
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    pub samples: Vec<Sample>,
    pub errors: usize,
    pub wall: Duration,
    /// CPU of the whole process during the phase.
    pub cpu_process: Duration,
    /// CPU of the Windlass runtime's threads (workers and blocking pool,
    /// where SQLite writes run) during the phase.
    pub cpu_windlass: Duration,
    /// Context switches of the Windlass threads.
    pub context_switches: u64,
    /// Highest resident set size of the whole process seen during the
    /// phase (sampled every 50 ms), bytes.
    pub rss_peak: u64,
}

impl Phase {
    pub(crate) fn ok(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(|s| s.ok)
    }

    pub(crate) fn count(&self) -> usize {
        self.samples.iter().filter(|s| s.ok).count()
    }

    pub(crate) fn events(&self) -> u64 {
        self.ok().map(|s| u64::from(s.events)).sum()
    }

    /// Successful requests per second.
    pub(crate) fn rate(&self) -> f64 {
        self.count() as f64 / self.wall.as_secs_f64()
    }
}

/// Runs `concurrency` workers, each calling `make` in a loop until
/// `duration` has passed (at least once; a request started before the
/// deadline runs to its end), and measures the CPU spent meanwhile.
pub(crate) async fn run_phase<F, Fut>(concurrency: usize, duration: Duration, make: F) -> Phase
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Sample> + Send + 'static,
{
    let make = Arc::new(make);
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        tokio::spawn(async move {
            let mut peak = crate::measure::rss_bytes();
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                peak = peak.max(crate::measure::rss_bytes());
            }
            peak
        })
    };
    let mark = CpuMark::now();
    let start = Instant::now();
    let deadline = start + duration;
    let workers: Vec<_> = (0..concurrency.max(1))
        .map(|_| {
            let make = make.clone();
            tokio::spawn(async move {
                let mut out = Vec::with_capacity(256);
                // At least one request per worker, even for a zero duration.
                loop {
                    out.push(make().await);
                    if Instant::now() >= deadline {
                        break;
                    }
                }
                out
            })
        })
        .collect();
    let mut samples = Vec::new();
    for w in workers {
        if let Ok(mut s) = w.await {
            samples.append(&mut s);
        }
    }
    let wall = start.elapsed();
    let (cpu_process, threads) = mark.elapsed();
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let rss_peak = sampler.await.unwrap_or(0);
    let errors = samples.iter().filter(|s| !s.ok).count();
    Phase {
        samples,
        errors,
        wall,
        cpu_process,
        cpu_windlass: threads.cpu,
        context_switches: threads.context_switches,
        rss_peak,
    }
}

/// A POST with a pre-serialized JSON body, read to the end.
pub(crate) async fn post_json(client: reqwest::Client, url: Arc<str>, body: Bytes) -> Sample {
    let start = Instant::now();
    let resp = match client
        .post(&*url)
        .header(CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(r) => r,
        Err(_) => return Sample::failed(start),
    };
    let ttfb = start.elapsed();
    let ok = resp.status().is_success();
    let ok = resp.bytes().await.is_ok() && ok;
    Sample {
        ok,
        total_ms: ms(start.elapsed()),
        ttfb_ms: ms(ttfb),
        ..Sample::default()
    }
}

/// Marks the first token in a stream: the first byte sequence that only a
/// frame carrying generated text contains.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TokenMarker {
    /// Chat completions chunk with text (`"delta":{"content":"..."}`).
    Chat,
    /// Responses `response.output_text.delta` event.
    Responses,
}

impl TokenMarker {
    fn bytes(self) -> &'static [u8] {
        match self {
            TokenMarker::Chat => b"{\"content\":\"",
            TokenMarker::Responses => b"event: response.output_text.delta",
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A streamed POST read to the end: time to headers, to the first token,
/// to the last byte, and the number of SSE events (`\n\n` separators).
pub(crate) async fn post_stream(
    client: reqwest::Client,
    url: Arc<str>,
    body: Bytes,
    marker: TokenMarker,
) -> Sample {
    let start = Instant::now();
    let resp = match client
        .post(&*url)
        .header(CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(r) => r,
        Err(_) => return Sample::failed(start),
    };
    let ttfb = start.elapsed();
    if !resp.status().is_success() {
        return Sample::failed(start);
    }
    let needle = marker.bytes();
    let mut ttft: Option<Duration> = None;
    // Bytes not yet searched for the marker (only kept until it is found).
    let mut pending: Vec<u8> = Vec::new();
    let mut events: u32 = 0;
    let mut last_was_newline = false;
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else {
            return Sample::failed(start);
        };
        if ttft.is_none() {
            pending.extend_from_slice(&chunk);
            if find(&pending, needle) {
                ttft = Some(start.elapsed());
                pending = Vec::new();
            } else if pending.len() > needle.len() {
                pending.drain(..pending.len() - needle.len());
            }
        }
        for &b in chunk.iter() {
            if b == b'\n' {
                if last_was_newline {
                    events += 1;
                    last_was_newline = false;
                } else {
                    last_was_newline = true;
                }
            } else {
                last_was_newline = false;
            }
        }
    }
    let total = start.elapsed();
    Sample {
        ok: ttft.is_some(),
        total_ms: ms(total),
        ttfb_ms: ms(ttfb),
        ttft_ms: ms(ttft.unwrap_or(total)),
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_markers() {
        let chat = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"}}]}";
        assert!(find(chat, TokenMarker::Chat.bytes()));
        let role = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}";
        assert!(!find(role, TokenMarker::Chat.bytes()));
        let ev = b"event: response.output_text.delta\ndata: {}\n\n";
        assert!(find(ev, TokenMarker::Responses.bytes()));
        assert!(!find(
            b"event: response.created\n",
            TokenMarker::Responses.bytes()
        ));
    }
}

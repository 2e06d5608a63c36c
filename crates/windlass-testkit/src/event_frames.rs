//! Named SSE events (`event: NAME` + `data: JSON`), the framing the
//! Responses API and Anthropic's Messages API use, into [`Frames`].

use bytes::Bytes;
use serde_json::Value;

use crate::reply::StreamEnd;
use crate::sse::Frames;

#[derive(Default)]
pub(crate) struct EventFrames {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl EventFrames {
    /// One event; its name is the `type` field of `data`.
    pub(crate) fn push(&mut self, data: &Value) {
        let name = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        self.buf.extend_from_slice(b"event: ");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\ndata: ");
        serde_json::to_writer(&mut self.buf, data).expect("JSON values always serialize");
        self.buf.extend_from_slice(b"\n\n");
        self.ends.push(self.buf.len());
    }

    /// Applies the reply's scripted end: all frames, the first `k` frames
    /// (cut, stall) or the first `k` then `error` (the kind's error event).
    pub(crate) fn finish(mut self, end: &StreamEnd, error: impl FnOnce(&str) -> Value) -> Frames {
        match end {
            StreamEnd::Done => {}
            StreamEnd::Cut(k) | StreamEnd::Stall(k) => self.truncate(*k),
            StreamEnd::ErrorEvent(k, message) => {
                self.truncate(*k);
                self.push(&error(message));
            }
        }
        Frames {
            buf: Bytes::from(self.buf),
            ends: self.ends,
        }
    }

    fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            let keep = if n == 0 { 0 } else { self.ends[n - 1] };
            self.buf.truncate(keep);
            self.ends.truncate(n);
        }
    }
}

//! Streamed encoding: a [`Turn`] becomes a sequence of SSE `data:` frames
//! (`chat.completion.chunk` objects, then `[DONE]`), all written into one
//! contiguous buffer. Frames are later handed out as zero-copy slices.

use std::io::Write as _;

use bytes::Bytes;

use crate::error_body::error_body;
use crate::reply::StreamEnd;
use crate::turn::{Turn, UsageNumbers};

/// The stream terminator.
pub(crate) const DONE: &[u8] = b"data: [DONE]\n\n";

/// Encoded SSE frames: `buf[ends[i-1]..ends[i]]` is frame `i`.
#[derive(Debug)]
pub(crate) struct Frames {
    pub buf: Bytes,
    pub ends: Vec<usize>,
}

impl Frames {
    /// Number of frames.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Byte range start of frame `i`.
    pub(crate) fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }
}

/// Splits `s` into pieces of `n` characters (`n == 0`: one piece).
/// An empty string yields no piece.
pub(crate) fn pieces(s: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = if n == 0 {
            rest.len()
        } else {
            rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i)
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

fn json_str(buf: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(buf, s).expect("writing JSON into a Vec cannot fail");
}

struct Encoder {
    buf: Vec<u8>,
    ends: Vec<usize>,
    /// `data: {"id":..,"object":..,"created":..,"model":..,`
    head: Vec<u8>,
    include_usage: bool,
    stop_sequence: Option<String>,
}

impl Encoder {
    fn new(turn: &Turn<'_>, include_usage: bool) -> Self {
        let mut head = Vec::with_capacity(96 + turn.model.len());
        head.extend_from_slice(b"data: {\"id\":");
        json_str(&mut head, &turn.id);
        head.extend_from_slice(b",\"object\":\"chat.completion.chunk\",\"created\":");
        write!(head, "{}", turn.created).expect("write to Vec");
        head.extend_from_slice(b",\"model\":");
        json_str(&mut head, &turn.model);
        head.push(b',');
        Encoder {
            buf: Vec::with_capacity(1024),
            ends: Vec::with_capacity(16),
            head,
            include_usage,
            stop_sequence: turn.reply.stop_sequence.clone(),
        }
    }

    fn end_frame(&mut self) {
        self.buf.extend_from_slice(b"\n\n");
        self.ends.push(self.buf.len());
    }

    /// One choice chunk; `delta` writes the delta object.
    fn choice(&mut self, delta: impl FnOnce(&mut Vec<u8>), finish: Option<&str>) {
        self.choice_with(delta, None, finish)
    }

    /// A choice chunk with `logprobs` (JSON) instead of `null`.
    fn choice_with(
        &mut self,
        delta: impl FnOnce(&mut Vec<u8>),
        logprobs: Option<&[u8]>,
        finish: Option<&str>,
    ) {
        self.buf.extend_from_slice(&self.head);
        self.buf
            .extend_from_slice(b"\"choices\":[{\"index\":0,\"delta\":");
        delta(&mut self.buf);
        self.buf.extend_from_slice(b",\"logprobs\":");
        self.buf.extend_from_slice(logprobs.unwrap_or(b"null"));
        self.buf.extend_from_slice(b",\"finish_reason\":");
        match finish {
            Some(f) => json_str(&mut self.buf, f),
            None => self.buf.extend_from_slice(b"null"),
        }
        if let (Some(_), Some(stop)) = (finish, &self.stop_sequence) {
            // vLLM names the stop string that ended the text.
            self.buf.extend_from_slice(b",\"stop_reason\":");
            json_str(&mut self.buf, stop);
        }
        self.buf.extend_from_slice(b"}]");
        if self.include_usage {
            // OpenAI sends `"usage":null` on every chunk but the last one.
            self.buf.extend_from_slice(b",\"usage\":null");
        }
        self.buf.push(b'}');
        self.end_frame();
    }

    /// A delta with a single string field.
    fn text_delta(&mut self, field: &str, text: &str) {
        self.choice(
            |b| {
                b.push(b'{');
                json_str(b, field);
                b.push(b':');
                json_str(b, text);
                b.push(b'}');
            },
            None,
        );
    }

    fn usage(&mut self, usage: UsageNumbers) {
        self.buf.extend_from_slice(&self.head);
        self.buf.extend_from_slice(b"\"choices\":[],\"usage\":");
        serde_json::to_writer(&mut self.buf, &usage.to_json()).expect("write to Vec");
        self.buf.push(b'}');
        self.end_frame();
    }

    fn raw(&mut self, frame: &[u8]) {
        self.buf.extend_from_slice(frame);
        self.ends.push(self.buf.len());
    }

    /// Keep only the first `n` frames.
    fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            let keep = if n == 0 { 0 } else { self.ends[n - 1] };
            self.buf.truncate(keep);
            self.ends.truncate(n);
        }
    }
}

/// Encodes the whole streamed answer for `turn`, honouring the reply's
/// [`StreamEnd`]. The usage chunk is present only when `include_usage`.
pub(crate) fn encode(turn: &Turn<'_>, include_usage: bool) -> Frames {
    let reply = turn.reply;
    let n = reply.chunk_chars;
    let mut e = Encoder::new(turn, include_usage);

    let role_content: &[u8] = if reply.content.is_some() || reply.tool_calls.is_empty() {
        b"\"\""
    } else {
        b"null"
    };
    e.choice(
        |b| {
            b.extend_from_slice(b"{\"role\":\"assistant\",\"content\":");
            b.extend_from_slice(role_content);
            b.push(b'}');
        },
        None,
    );
    if let Some(r) = &reply.reasoning {
        for piece in pieces(r, n) {
            e.text_delta(&reply.reasoning_field, piece);
        }
    }
    if let Some(c) = &reply.content {
        for piece in pieces(c, n) {
            if reply.logprobs {
                let logprobs = crate::completion::logprobs_json(&[piece]).to_string();
                e.choice_with(
                    |b| {
                        b.extend_from_slice(b"{\"content\":");
                        json_str(b, piece);
                        b.push(b'}');
                    },
                    Some(logprobs.as_bytes()),
                    None,
                );
            } else {
                e.text_delta("content", piece);
            }
        }
    }
    for (index, (call, id)) in reply.tool_calls.iter().zip(&turn.call_ids).enumerate() {
        e.choice(
            |b| {
                write!(b, "{{\"tool_calls\":[{{\"index\":{index},\"id\":").expect("write");
                json_str(b, id);
                b.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
                json_str(b, &call.name);
                b.extend_from_slice(b",\"arguments\":\"\"}}]}");
            },
            None,
        );
        for piece in pieces(&call.arguments, n) {
            e.choice(
                |b| {
                    write!(
                        b,
                        "{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":"
                    )
                    .expect("write");
                    json_str(b, piece);
                    b.extend_from_slice(b"}}]}");
                },
                None,
            );
        }
    }
    e.choice(|b| b.extend_from_slice(b"{}"), Some(turn.finish_reason()));
    if include_usage {
        if let Some(u) = turn.usage {
            e.usage(u);
        }
    }

    match &reply.end {
        StreamEnd::Done => e.raw(DONE),
        StreamEnd::Cut(k) | StreamEnd::Stall(k) => e.truncate(*k),
        StreamEnd::ErrorEvent(k, message) => {
            e.truncate(*k);
            let mut frame = b"data: ".to_vec();
            serde_json::to_writer(&mut frame, &error_body(500, message)).expect("write");
            frame.extend_from_slice(b"\n\n");
            e.raw(&frame);
            e.raw(DONE);
        }
    }
    Frames {
        buf: Bytes::from(e.buf),
        ends: e.ends,
    }
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn pieces_split_on_char_boundaries() {
        let v: Vec<_> = pieces("héllo wörld", 4).collect();
        assert_eq!(v, ["héll", "o wö", "rld"]);
        assert_eq!(pieces("", 4).count(), 0);
        assert_eq!(pieces("abc", 0).collect::<Vec<_>>(), ["abc"]);
    }
}

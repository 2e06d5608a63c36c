//! A server-sent events parser for byte chunks cut anywhere.
//!
//! Written by hand because it sits on the hot path of every streamed token:
//! complete lines are read straight out of the incoming chunk, and only a
//! line cut by a chunk boundary is copied (into a reused buffer). Only the
//! `data` field matters to chat completions; `event`, `id`, `retry` and
//! comments are skipped.

/// Incremental SSE parser: feed chunks, get each event's `data` payload.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The current event's data lines, joined with `\n`.
    data: String,
    /// Whether the current event has a `data` field (it may be empty).
    has_data: bool,
    /// The previous chunk ended in `\r`: a leading `\n` belongs to that line end.
    skip_lf: bool,
}

/// A line that is not UTF-8: the upstream is not speaking SSE.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event stream line is not valid UTF-8")]
pub struct InvalidUtf8;

impl SseParser {
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Parses `chunk`, calling `on_data` with the data of every event it
    /// completes. Stops at the first error `on_data` returns.
    pub fn feed<E, F>(&mut self, mut chunk: &[u8], mut on_data: F) -> Result<(), E>
    where
        E: From<InvalidUtf8>,
        F: FnMut(&str) -> Result<(), E>,
    {
        if self.skip_lf {
            match chunk {
                // An empty chunk says nothing about the byte after the `\r`.
                [] => return Ok(()),
                [b'\n', rest @ ..] => chunk = rest,
                _ => {}
            }
            self.skip_lf = false;
        }
        while let Some(end) = find_eol(chunk) {
            let (line, rest) = chunk.split_at(end);
            chunk = match rest {
                [b'\r', b'\n', tail @ ..] => tail,
                [b'\r'] => {
                    self.skip_lf = true;
                    &[]
                }
                [_, tail @ ..] => tail,
                [] => &[],
            };
            if !self.partial.is_empty() {
                let mut joined = std::mem::take(&mut self.partial);
                joined.extend_from_slice(line);
                let result = self.line(&joined, &mut on_data);
                joined.clear();
                self.partial = joined;
                result?;
                continue;
            }
            // Fast path, the usual shape: `data: ...` then a blank line, both
            // in this chunk. The value is handed out without being copied.
            if !self.has_data {
                if let (Some(value), Some(after)) = (data_value(line), after_blank_line(chunk)) {
                    chunk = after;
                    on_data(std::str::from_utf8(value).map_err(|_| InvalidUtf8)?)?;
                    continue;
                }
            }
            self.line(line, &mut on_data)?;
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The body ended: an event missing its closing blank line still counts
    /// (some servers end with `data: [DONE]\n` or no newline at all).
    pub fn finish<E, F>(&mut self, mut on_data: F) -> Result<(), E>
    where
        E: From<InvalidUtf8>,
        F: FnMut(&str) -> Result<(), E>,
    {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last, &mut on_data)?;
        }
        self.line(b"", &mut on_data)
    }

    fn line<E, F>(&mut self, line: &[u8], on_data: &mut F) -> Result<(), E>
    where
        E: From<InvalidUtf8>,
        F: FnMut(&str) -> Result<(), E>,
    {
        if line.is_empty() {
            if !self.has_data {
                return Ok(());
            }
            self.has_data = false;
            let result = on_data(&self.data);
            self.data.clear();
            return result;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return Ok(()), // comment / keep-alive
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field != b"data" {
            return Ok(());
        }
        let value = std::str::from_utf8(value).map_err(|_| InvalidUtf8)?;
        if self.has_data {
            self.data.push('\n');
        }
        self.data.push_str(value);
        self.has_data = true;
        Ok(())
    }
}

/// The value of a `data:` line, if `line` is one.
fn data_value(line: &[u8]) -> Option<&[u8]> {
    let value = line.strip_prefix(b"data:")?;
    Some(value.strip_prefix(b" ").unwrap_or(value))
}

/// What follows a blank line at the start of `rest`; `None` when `rest`
/// does not start with one, or when it ends in a `\r` whose `\n` may still
/// be on its way (the slow path tracks that).
fn after_blank_line(rest: &[u8]) -> Option<&[u8]> {
    match rest {
        [b'\n', tail @ ..] | [b'\r', b'\n', tail @ ..] => Some(tail),
        [b'\r', tail @ ..] if !tail.is_empty() => Some(tail),
        _ => None,
    }
}

/// Index of the first `\n` or `\r`, eight bytes at a time: this scan runs
/// over every byte the upstream sends.
fn find_eol(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero => its high bit is set in `zero_bytes(x)`; the
    // lowest flagged byte is always a real zero (borrows only run upward).
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut offset = 0;
    let mut rest = bytes;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let w = u64::from_le_bytes(*word);
        let hits =
            zero_bytes(w ^ (ONES * u64::from(b'\n'))) | zero_bytes(w ^ (ONES * u64::from(b'\r')));
        if hits != 0 {
            return Some(offset + (hits.trailing_zeros() / 8) as usize);
        }
        offset += 8;
        rest = tail;
    }
    rest.iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|i| offset + i)
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;

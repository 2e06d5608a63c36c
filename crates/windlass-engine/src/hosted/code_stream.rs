//! The `code` of a `code_interpreter` call, decoded while the model streams
//! its arguments (`{"code": "print(6*7)"}` arrives in arbitrary pieces), so
//! the client sees the code as it is written
//! (`response.code_interpreter_call_code.delta`), before it runs.

/// Feeds argument pieces; yields the newly decoded part of `code`.
#[derive(Debug, Default)]
pub(crate) struct CodeStream {
    /// The arguments so far.
    buf: String,
    /// Where the `code` string's contents start in `buf`, once found.
    start: Option<usize>,
    /// How far `buf` has been decoded (a byte offset from `start`'s side).
    pos: usize,
    /// The closing quote was seen: nothing more comes.
    closed: bool,
    /// Everything decoded so far.
    decoded: String,
}

impl CodeStream {
    /// Takes the next piece of the arguments; returns the code it completes
    /// (empty when it ends inside an escape, or before the string starts).
    pub(crate) fn push(&mut self, piece: &str) -> String {
        self.buf.push_str(piece);
        if self.closed {
            return String::new();
        }
        if self.start.is_none() {
            self.start = find_code_start(&self.buf);
            self.pos = self.start.unwrap_or(0);
        }
        if self.start.is_none() {
            return String::new();
        }
        let (text, used, closed) = decode(&self.buf[self.pos..]);
        self.pos += used;
        self.closed = closed;
        self.decoded.push_str(&text);
        text
    }

    /// The code streamed so far.
    pub(crate) fn decoded(&self) -> &str {
        &self.decoded
    }
}

/// The byte offset just after the opening quote of the `code` value: the
/// key `"code"`, optional blanks, `:`, optional blanks, `"`.
fn find_code_start(buf: &str) -> Option<usize> {
    let key = "\"code\"";
    let mut from = 0;
    while let Some(k) = buf[from..].find(key) {
        let after = from + k + key.len();
        let rest = &buf[after..];
        let trimmed = rest.trim_start();
        if let Some(value) = trimmed.strip_prefix(':') {
            let value = value.trim_start();
            if let Some(inner) = value.strip_prefix('"') {
                return Some(buf.len() - inner.len());
            }
            if value.is_empty() {
                return None;
            }
        } else if trimmed.is_empty() {
            return None;
        }
        from = after;
    }
    None
}

/// Decodes a JSON string's contents from the start of `s`; stops at the
/// closing quote or before an escape that is not complete yet. Returns the
/// text, the bytes consumed and whether the string closed.
fn decode(s: &str) -> (String, usize, bool) {
    let mut out = String::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return (out, i + 1, true),
            b'\\' => match escape(&s[i..]) {
                Some((text, len)) => {
                    out.push_str(&text);
                    i += len;
                }
                None => break,
            },
            _ => {
                // Copy up to the next quote or backslash (both ASCII, so
                // the cut is on a character boundary).
                let run = bytes[i..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\')
                    .unwrap_or(bytes.len() - i);
                out.push_str(&s[i..i + run]);
                i += run;
            }
        }
    }
    (out, i, false)
}

/// One escape at the start of `s` (which starts with `\`): its text and
/// length, or `None` when `s` ends before the escape does. A malformed
/// escape is passed through as written.
fn escape(s: &str) -> Option<(String, usize)> {
    let c = *s.as_bytes().get(1)?;
    let simple = match c {
        b'n' => Some('\n'),
        b't' => Some('\t'),
        b'r' => Some('\r'),
        b'b' => Some('\u{8}'),
        b'f' => Some('\u{c}'),
        b'"' => Some('"'),
        b'\\' => Some('\\'),
        b'/' => Some('/'),
        _ => None,
    };
    if let Some(ch) = simple {
        return Some((ch.to_string(), 2));
    }
    if c != b'u' {
        return Some((s[..1].to_owned(), 1));
    }
    let unit = hex4(s.get(2..6)?)?;
    if !(0xD800..0xDC00).contains(&unit) {
        let ch = char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER);
        return Some((ch.to_string(), 6));
    }
    // A high surrogate: the low one follows as `\uXXXX`.
    let low = s.get(6..12)?;
    let ch = low
        .strip_prefix("\\u")
        .and_then(hex4)
        .filter(|l| (0xDC00..0xE000).contains(l))
        .and_then(|l| char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (l - 0xDC00)));
    match ch {
        Some(ch) => Some((ch.to_string(), 12)),
        None => Some((char::REPLACEMENT_CHARACTER.to_string(), 6)),
    }
}

fn hex4(s: &str) -> Option<u32> {
    if s.len() != 4 {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `args` cut after every `step` characters; returns the pieces.
    fn feed(args: &str, step: usize) -> Vec<String> {
        let chars: Vec<char> = args.chars().collect();
        let mut s = CodeStream::default();
        chars
            .chunks(step)
            .map(|c| s.push(&c.iter().collect::<String>()))
            .filter(|p| !p.is_empty())
            .collect()
    }

    #[test]
    fn the_code_is_decoded_whatever_the_cuts() {
        let code = "print(\"a\\tb\")\nx = '\u{e9}\u{1F600}'";
        let args = serde_json::json!({ "code": code }).to_string();
        let escaped = args.replace('\u{1F600}', "\\ud83d\\ude00");
        for a in [&args, &escaped] {
            for step in 1..8 {
                let pieces = feed(a, step);
                assert_eq!(pieces.concat(), code, "step {step} of {a}");
            }
        }
        assert!(feed(&args, 1).len() > 5, "streamed in many pieces");
    }

    #[test]
    fn text_before_the_code_and_after_it_is_not_code() {
        let args = r#"{ "note": "the \"code\" here", "code" : "1+1" , "z": "no"}"#;
        assert_eq!(feed(args, 3).concat(), "1+1");
        let mut s = CodeStream::default();
        assert_eq!(s.push(r#"{"code": 5}"#), "");
        assert_eq!(s.decoded(), "");
    }
}

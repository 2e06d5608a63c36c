//! `stream_options.include_obfuscation` on Windlass's own SSE: each delta
//! event gets an `obfuscation` field of random characters, sized so the
//! length of the encrypted frame says little about the length of its delta.
//! On unless the client turns it off (OpenAI's default).

use bytes::BytesMut;
use windlass_protocol::obfuscation::{is_delta_event, padding};

/// Adds `"obfuscation":"…"` to the event JSON that starts at `json` in
/// `buf` (the frame written so far ends with that JSON's `}`), when `kind`
/// is a delta event.
pub(super) fn pad(buf: &mut BytesMut, json: usize, kind: &str) {
    if !is_delta_event(kind) || buf.last() != Some(&b'}') {
        return;
    }
    let len = buf.len() - json;
    buf.truncate(buf.len() - 1);
    buf.extend_from_slice(b",\"obfuscation\":\"");
    buf.extend_from_slice(padding(len).as_bytes());
    buf.extend_from_slice(b"\"}");
}

/// The same for an event serialized on its own (a background run's log,
/// whose events reach clients when they attach).
pub(crate) fn pad_json(json: &mut String, kind: &str) {
    if !is_delta_event(kind) || !json.ends_with('}') {
        return;
    }
    let len = json.len();
    json.pop();
    json.push_str(",\"obfuscation\":\"");
    json.push_str(&padding(len));
    json.push_str("\"}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(kind: &str, json: &str) -> serde_json::Value {
        let mut buf = BytesMut::from(&b"event: x\ndata: "[..]);
        let at = buf.len();
        buf.extend_from_slice(json.as_bytes());
        pad(&mut buf, at, kind);
        serde_json::from_slice(&buf[at..]).expect("still one JSON object")
    }

    #[test]
    fn delta_events_get_padding_and_others_do_not() {
        let v = padded(
            "response.output_text.delta",
            r#"{"type":"response.output_text.delta","delta":"Hi"}"#,
        );
        assert_eq!(v["delta"], "Hi");
        let pad = v["obfuscation"].as_str().expect("padding");
        assert!(!pad.is_empty() && pad.chars().all(|c| c.is_ascii_alphanumeric()));
        let done = padded("response.completed", r#"{"type":"response.completed"}"#);
        assert!(done.get("obfuscation").is_none());
        let mut json = r#"{"type":"response.output_text.delta","delta":"Hi"}"#.to_owned();
        pad_json(&mut json, "response.output_text.delta");
        let v: serde_json::Value = serde_json::from_str(&json).expect("json");
        assert!(v["obfuscation"].as_str().is_some_and(|p| !p.is_empty()));
    }
}

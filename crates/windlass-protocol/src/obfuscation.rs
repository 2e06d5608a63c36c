//! Stream obfuscation (`stream_options.include_obfuscation`, on unless the
//! client turns it off, as OpenAI does): delta events get an `obfuscation`
//! field of random characters so the size of an encrypted event says
//! little about the size of its delta (a length side channel). Windlass's
//! own stream honours it; upstream streams are never forwarded as is.

use rand::Rng;

/// Deltas are padded up to a multiple of this many characters...
const BUCKET: usize = 32;
/// ...plus up to this many more at random.
const EXTRA: usize = 16;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Whether an event type carries a delta (and so gets obfuscation).
pub fn is_delta_event(event_type: &str) -> bool {
    event_type.ends_with(".delta")
}

/// Random padding for a delta of `delta_len` bytes.
pub fn padding(delta_len: usize) -> String {
    let mut rng = rand::rng();
    let len = BUCKET - delta_len % BUCKET + rng.random_range(0..=EXTRA);
    (0..len)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// Adds `"obfuscation":"<padding>"` to a serialized event object (its last
/// byte is the closing `}`); anything else is left as it is.
pub fn obfuscate(event_json: &mut Vec<u8>, delta_len: usize) {
    if event_json.last() != Some(&b'}') {
        return;
    }
    event_json.pop();
    event_json.extend_from_slice(b",\"obfuscation\":\"");
    event_json.extend_from_slice(padding(delta_len).as_bytes());
    event_json.extend_from_slice(b"\"}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_is_added_and_hides_the_delta_size() {
        let mut json = br#"{"type":"response.output_text.delta","delta":"Hi"}"#.to_vec();
        obfuscate(&mut json, 2);
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["delta"], "Hi");
        let pad = v["obfuscation"].as_str().unwrap();
        assert!(pad.chars().all(|c| c.is_ascii_alphanumeric()));
        // Two deltas in one bucket pad to totals of the same range.
        for len in [1usize, 7, 31, 32, 33] {
            let total = len + padding(len).len();
            let bucketed = len.div_ceil(BUCKET).max(1) * BUCKET;
            assert!(
                total >= bucketed && total <= bucketed + BUCKET + EXTRA,
                "{len}: {total}"
            );
        }
        assert!(is_delta_event("response.output_text.delta"));
        assert!(!is_delta_event("response.completed"));
    }
}

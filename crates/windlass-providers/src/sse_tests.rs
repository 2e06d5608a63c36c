use super::*;

#[derive(Debug, PartialEq)]
enum Err {
    Utf8,
    Stop,
}

impl From<InvalidUtf8> for Err {
    fn from(_: InvalidUtf8) -> Self {
        Err::Utf8
    }
}

/// Feeds `chunks` then ends the body; returns every event's data.
fn parse(chunks: &[&[u8]]) -> Result<Vec<String>, Err> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, |d| {
            out.push(d.to_owned());
            Ok::<(), Err>(())
        })?;
    }
    p.finish(|d| {
        out.push(d.to_owned());
        Ok::<(), Err>(())
    })?;
    Ok(out)
}

fn parse_one(s: &str) -> Vec<String> {
    parse(&[s.as_bytes()]).expect("parses")
}

const SAMPLE: &str = ": keep-alive\r\n\
event: message\r\n\
id: 7\r\n\
data: {\"a\":\"h\u{e9}llo \u{1f600}\"}\r\n\
\r\n\
data:{\"b\":1}\n\n\
retry: 100\n\
data: line1\r\n\
data: line2\r\
\r\
data\n\n\
data: [DONE]\n\n";

fn sample_events() -> Vec<String> {
    vec![
        "{\"a\":\"h\u{e9}llo \u{1f600}\"}".into(),
        "{\"b\":1}".into(),
        "line1\nline2".into(),
        "".into(),
        "[DONE]".into(),
    ]
}

#[test]
fn parses_fields_comments_and_line_endings() {
    assert_eq!(parse_one(SAMPLE), sample_events());
}

#[test]
fn every_split_point_gives_the_same_events() {
    let bytes = SAMPLE.as_bytes();
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        assert_eq!(
            parse(&[a, b]).expect("parses"),
            sample_events(),
            "cut at {cut}"
        );
    }
}

#[test]
fn every_pair_of_split_points_gives_the_same_events() {
    let bytes = SAMPLE.as_bytes();
    for i in 0..=bytes.len() {
        for j in i..=bytes.len() {
            let chunks = [&bytes[..i], &bytes[i..j], &bytes[j..]];
            assert_eq!(
                parse(&chunks).expect("parses"),
                sample_events(),
                "cuts {i},{j}"
            );
        }
    }
}

#[test]
fn byte_by_byte() {
    let chunks: Vec<&[u8]> = SAMPLE.as_bytes().chunks(1).collect();
    assert_eq!(parse(&chunks).expect("parses"), sample_events());
}

#[test]
fn crlf_split_between_cr_and_lf_is_one_line_end() {
    // "\r" then "\n" in the next chunk must not produce an extra blank line,
    // which would dispatch "a" early and split the event in two.
    let out = parse(&[b"data: a\r", b"\ndata: b\r\n\r\n"]).expect("parses");
    assert_eq!(out, vec!["a\nb".to_owned()]);
}

#[test]
fn unterminated_last_event_is_delivered_at_the_end() {
    assert_eq!(parse_one("data: x\n\ndata: [DONE]"), vec!["x", "[DONE]"]);
    assert_eq!(parse_one("data: [DONE]\n"), vec!["[DONE]"]);
}

#[test]
fn blank_lines_and_comments_alone_produce_nothing() {
    assert!(parse_one("\n\n: ping\n\n\r\n").is_empty());
}

#[test]
fn only_one_space_after_the_colon_is_stripped() {
    assert_eq!(parse_one("data:  two\n\n"), vec![" two"]);
}

#[test]
fn invalid_utf8_is_an_error() {
    assert_eq!(parse(&[b"data: \xff\xfe\n\n"]), Err(Err::Utf8));
}

#[test]
fn a_callback_error_stops_parsing() {
    let mut p = SseParser::new();
    let mut seen = 0;
    let r = p.feed(b"data: 1\n\ndata: 2\n\n", |_| {
        seen += 1;
        Err(Err::Stop)
    });
    assert_eq!(r, Err(Err::Stop));
    assert_eq!(seen, 1);
}

#[test]
fn partial_line_buffer_is_reused_not_grown() {
    let mut p = SseParser::new();
    for _ in 0..100 {
        p.feed(b"data: abc", |_| Ok::<(), Err>(())).expect("feeds");
        p.feed(b"def\n\n", |d| {
            assert_eq!(d, "abcdef");
            Ok::<(), Err>(())
        })
        .expect("feeds");
    }
    assert!(p.partial.is_empty());
    assert!(p.partial.capacity() < 64);
}

#[test]
fn find_eol_matches_a_plain_scan() {
    let mut bytes: Vec<u8> = (0u8..=255).cycle().take(700).collect();
    bytes.retain(|&b| b != b'\n' && b != b'\r');
    assert_eq!(find_eol(&bytes), None);
    for at in 0..40 {
        for eol in [b'\n', b'\r'] {
            let mut b = bytes[..40].to_vec();
            b[at] = eol;
            // A later terminator and bytes just above/below must not win.
            b[39] = b'\n';
            if at > 0 {
                b[at - 1] = eol.wrapping_add(1);
            }
            let expected = b.iter().position(|&x| x == b'\n' || x == b'\r');
            assert_eq!(find_eol(&b), expected, "at {at}");
            assert_eq!(find_eol(&b[at..]), Some(0));
        }
    }
}

#[test]
fn fast_path_and_slow_path_agree_on_a_lone_cr_before_the_blank_line() {
    assert_eq!(parse_one("data: a\r\rdata: b\n\n"), vec!["a", "b"]);
    assert_eq!(
        parse(&[b"data: a\r\r", b"data: b\n\n"]).expect("parses"),
        vec!["a", "b"]
    );
    assert_eq!(
        parse(&[b"data: a\n\r", b"\ndata: b\n\n"]).expect("parses"),
        vec!["a", "b"]
    );
}

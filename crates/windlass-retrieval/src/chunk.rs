//! Token chunking, as OpenAI's vector stores do it: windows of at most
//! `max_chunk_size_tokens` tokens, each starting `max - overlap` tokens after
//! the previous one, so neighbours share `chunk_overlap_tokens` tokens.
//!
//! Tokens are cl100k_base BPE tokens (`tiktoken-rs`), the tokenizer of
//! OpenAI's embedding models, so a size means what it means at OpenAI. A
//! window edge can fall inside a multi-byte character; its partial bytes are
//! dropped, never turned into replacement characters.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;
use windlass_protocol::StaticChunking;

/// One chunk of a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChunk {
    pub text: String,
    /// Tokens in the window the text came from.
    pub tokens: u32,
}

/// The tokenizer, built once (parsing its 100k-entry table takes a moment).
fn bpe() -> Result<&'static CoreBPE, ChunkError> {
    static BPE: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| ChunkError(format!("the tokenizer could not be loaded: {e}")))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ChunkError(String);

/// The number of cl100k_base tokens in `text`.
pub fn count_tokens(text: &str) -> Result<usize, ChunkError> {
    Ok(bpe()?.encode_ordinary(text).len())
}

/// `text` cut into overlapping token windows (`sizes` already checked:
/// 100..=4096 tokens, overlap at most half). CPU-bound: call it off the
/// async threads for large texts.
pub fn chunk(text: &str, sizes: StaticChunking) -> Result<Vec<TextChunk>, ChunkError> {
    let bpe = bpe()?;
    let tokens = bpe.encode_ordinary(text);
    let max = (sizes.max_chunk_size_tokens as usize).max(1);
    let step = max
        .saturating_sub(sizes.chunk_overlap_tokens as usize)
        .max(1);
    let mut out = Vec::with_capacity(tokens.len() / step + 1);
    let mut start = 0;
    while start < tokens.len() {
        let end = (start + max).min(tokens.len());
        let window = &tokens[start..end];
        let bytes = bpe
            .decode_bytes(window)
            .map_err(|e| ChunkError(format!("token {} has no text", e.token)))?;
        let text = whole_chars(&bytes);
        if !text.trim().is_empty() {
            out.push(TextChunk {
                text: text.trim().to_owned(),
                tokens: u32::try_from(window.len()).unwrap_or(u32::MAX),
            });
        }
        if end == tokens.len() {
            break;
        }
        start += step;
    }
    Ok(out)
}

/// The characters wholly inside `bytes`: a character cut by the window's
/// start or end is left out.
fn whole_chars(bytes: &[u8]) -> String {
    // Continuation bytes (10xxxxxx) at the start belong to a character that
    // began before the window; there are at most three.
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    let bytes = &bytes[skip..];
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        // Cut at the end: keep what is valid before it.
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        // Tokens of one text never decode to invalid bytes inside a window;
        // if a tokenizer ever did, a replacement character beats a failure.
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(max: u32, overlap: u32) -> StaticChunking {
        StaticChunking {
            max_chunk_size_tokens: max,
            chunk_overlap_tokens: overlap,
        }
    }

    #[test]
    fn windows_overlap_by_the_requested_tokens() {
        // "w0 w1 ... w999": one token per " wN" piece is not guaranteed, so
        // the test counts with the same tokenizer.
        let text: String = (0..1000).map(|i| format!("word{i} ")).collect();
        let total = count_tokens(&text).unwrap();
        let chunks = chunk(&text, sizes(100, 50)).unwrap();
        assert!(chunks.iter().all(|c| c.tokens <= 100));
        assert!(chunks[..chunks.len() - 1].iter().all(|c| c.tokens == 100));
        // Windows start every 50 tokens until one reaches the end.
        assert_eq!(chunks.len(), (total - 100).div_ceil(50) + 1);
        // Neighbours share text: the second starts inside the first.
        let second_start: String = chunks[1].text.chars().take(20).collect();
        assert!(chunks[0].text.contains(&second_start));
        assert!(chunks.last().unwrap().text.ends_with("word999"));
    }

    #[test]
    fn auto_sizes_and_short_texts() {
        let one = chunk("A short note.", StaticChunking::AUTO).unwrap();
        assert_eq!(
            one,
            vec![TextChunk {
                text: "A short note.".into(),
                tokens: 4
            }]
        );
        assert!(chunk("", StaticChunking::AUTO).unwrap().is_empty());
        assert!(chunk("   \n\n  ", StaticChunking::AUTO).unwrap().is_empty());
    }

    #[test]
    fn no_overlap_covers_the_text_once() {
        let text: String = (0..500).map(|i| format!("item {i}. ")).collect();
        let text = text.trim_end();
        let chunks = chunk(text, sizes(100, 0)).unwrap();
        let total: u32 = chunks.iter().map(|c| c.tokens).sum();
        assert_eq!(total as usize, count_tokens(text).unwrap());
    }

    #[test]
    fn multibyte_text_is_never_mangled() {
        // CJK and emoji split into several tokens each; window edges fall
        // inside characters.
        let text = "日本語のテキストと絵文字🙂🚀を含む文章です。".repeat(200);
        for c in chunk(&text, sizes(100, 37)).unwrap() {
            assert!(!c.text.contains('\u{FFFD}'), "{:?}", c.text);
            assert!(text.contains(&c.text), "a chunk is a piece of the text");
        }
    }

    #[test]
    fn cut_characters_are_dropped() {
        let s = "é€🙂";
        let b = s.as_bytes();
        assert_eq!(whole_chars(&b[1..]), "€🙂");
        assert_eq!(whole_chars(&b[..b.len() - 1]), "é€");
        assert_eq!(whole_chars(b), s);
    }
}

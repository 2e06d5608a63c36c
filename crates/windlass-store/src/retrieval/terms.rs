//! Keyword queries from natural language: a question becomes its words,
//! OR'd, with nothing in it read as query syntax by either backend.
//!
//! Words are runs of letters and digits (so `C++`, quotes, `*`, `NEAR(`,
//! `AND` and `:` never reach a parser as operators), lower-cased, without
//! common English stop words, deduplicated, at most [`MAX_TERMS`].

/// Words kept from one query.
pub(crate) const MAX_TERMS: usize = 64;

/// English function words: they match nearly every chunk, so they only
/// dilute a keyword ranking (Postgres's `english` configuration drops them
/// too; dropping them here keeps SQLite's candidates the same).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "nor", "not", "of", "on",
    "or", "our", "ours", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours",
];

/// The words of `text` to search for.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        let short = word.chars().count() < 2 && !word.chars().all(|c| c.is_numeric());
        if word.is_empty() || short || STOP_WORDS.contains(&word.as_str()) {
            continue;
        }
        if !out.contains(&word) {
            out.push(word);
            if out.len() == MAX_TERMS {
                break;
            }
        }
    }
    out
}

/// An FTS5 `MATCH` expression: each word a quoted string, OR'd. Words hold
/// only letters and digits, so the quotes cannot be broken out of.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn fts5_query(terms: &[String]) -> String {
    let quoted: Vec<String> = terms.iter().map(|t| format!("\"{t}\"")).collect();
    quoted.join(" OR ")
}

/// A `to_tsquery` argument: the words OR'd (`|`); letters and digits only,
/// so it always parses.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn tsquery(terms: &[String]) -> String {
    terms.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_and_operators_are_words_or_nothing() {
        assert_eq!(terms("what's C++?"), Vec::<String>::new());
        assert_eq!(terms("C++ templates"), vec!["templates"]);
        assert_eq!(
            terms("\"quoted\" AND NEAR(x y) * col:value -neg"),
            vec!["quoted", "near", "col", "value", "neg"]
        );
        assert_eq!(
            terms("Refund refund REFUND policy"),
            vec!["refund", "policy"]
        );
        assert_eq!(terms("v2 of 3 items"), vec!["v2", "3", "items"]);
        assert_eq!(terms("Grüße aus Köln"), vec!["grüße", "aus", "köln"]);
    }

    #[test]
    fn queries_quote_every_word() {
        let t = terms("rust OR \"sqlite\"");
        assert_eq!(fts5_query(&t), "\"rust\" OR \"sqlite\"");
        assert_eq!(tsquery(&t), "rust | sqlite");
        let many = (0..100)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(terms(&many).len(), MAX_TERMS);
    }
}

//! What the model sees of a `file_search` call, and the citations read back
//! from its answer.
//!
//! The call's output (the text of the `function_call_output` the model is
//! fed, rendered from the stored item alone, so a replay across
//! `previous_response_id` shows the model the same text) lists each chunk
//! with its file id and name. The model is asked to cite a chunk by writing
//! its file id in square brackets right after what it supports, e.g.
//! `Refunds take 30 days [file-3f2a…].` Each such marker naming a file of
//! the search becomes a `file_citation` annotation on the answer; its
//! `index` is the character position of the marker's `[` in the text. The
//! markers stay in the text (the client already streamed them).

use windlass_protocol::{FileCitation, FileSearchCall, FileSearchResult};

/// How the model is told to cite, in the tool's description and output.
pub const CITATION_INSTRUCTIONS: &str = "Cite a result by writing its file id in square \
brackets, like [file-abc123], right after the sentence it supports.";

/// The tool's description for the model.
pub const TOOL_DESCRIPTION: &str = "Search the user's uploaded files for passages relevant to \
a natural-language query. Returns the best matching passages with their file ids and names.";

/// The output text of a `file_search` call, from the item.
pub fn model_text(call: &FileSearchCall) -> String {
    let results = call.results.as_deref().unwrap_or_default();
    let queries = call.queries.join("\" / \"");
    if results.is_empty() {
        return format!("No results in the searched files for \"{queries}\".");
    }
    let mut out = format!(
        "{} results for \"{queries}\". {CITATION_INSTRUCTIONS}\n",
        results.len()
    );
    for r in results {
        out.push_str(&result_text(r));
    }
    out
}

fn result_text(r: &FileSearchResult) -> String {
    let id = r.file_id.as_deref().unwrap_or("unknown");
    let name = r.filename.as_deref().unwrap_or("unnamed");
    let score = r
        .score
        .map(|s| format!(" (score {s:.2})"))
        .unwrap_or_default();
    let text = r.text.as_deref().unwrap_or_default();
    format!("\n[{id}] {name}{score}\n{text}\n")
}

/// The `file_citation` annotations of `answer`: one per marker naming a
/// file among `results`, in text order.
pub fn citations(answer: &str, results: &[FileSearchResult]) -> Vec<FileCitation> {
    let mut out = Vec::new();
    let mut chars = 0usize;
    let mut rest = answer;
    while let Some(open) = rest.find('[') {
        chars += rest[..open].chars().count();
        let after = &rest[open + 1..];
        if let Some(close) = after.find(']') {
            let inner = after[..close].trim();
            let found = results.iter().find(|r| r.file_id.as_deref() == Some(inner));
            if let Some(r) = found {
                out.push(FileCitation {
                    file_id: inner.to_owned(),
                    filename: r.filename.clone().unwrap_or_default(),
                    index: chars as u64,
                });
            }
        }
        chars += 1;
        rest = after;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_protocol::FileSearchCallStatus;

    fn result(id: &str, name: &str, text: &str) -> FileSearchResult {
        FileSearchResult {
            file_id: Some(id.into()),
            filename: Some(name.into()),
            score: Some(0.875),
            text: Some(text.into()),
            attributes: None,
        }
    }

    #[test]
    fn output_lists_ids_names_and_text() {
        let call = FileSearchCall {
            id: "fs_1".into(),
            queries: vec!["refunds".into()],
            status: FileSearchCallStatus::Completed,
            results: Some(vec![result("file-1", "policy.md", "Refunds take 30 days.")]),
        };
        let text = model_text(&call);
        assert!(
            text.starts_with("1 results for \"refunds\". Cite a result"),
            "{text}"
        );
        assert!(text.contains("[file-1] policy.md (score 0.88)\nRefunds take 30 days.\n"));
        let empty = FileSearchCall {
            results: Some(vec![]),
            ..call
        };
        assert_eq!(
            model_text(&empty),
            "No results in the searched files for \"refunds\"."
        );
    }

    #[test]
    fn markers_of_found_files_become_citations() {
        let results = [
            result("file-1", "policy.md", ""),
            result("file-2", "faq.md", ""),
        ];
        let answer = "Refunds take 30 days [file-1]. Über [x] and [file-9] [ file-2 ]";
        let c = citations(answer, &results);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].file_id.as_str(), c[0].filename.as_str(), c[0].index),
            ("file-1", "policy.md", 21)
        );
        let idx = c[1].index as usize;
        assert_eq!(answer.chars().nth(idx), Some('['));
        assert_eq!(c[1].file_id, "file-2");
        assert!(citations("no markers [", &results).is_empty());
    }
}

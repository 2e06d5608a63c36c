//! What the model reads for a hosted call (`file_search_call`,
//! `web_search_call`, `code_interpreter_call`), rendered from the item
//! alone — the first time and when a chain replays it — and the citations
//! read back from the model's answer.
//!
//! ## file_search
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

use crate::code_interpreter::{CodeInterpreterCall, CodeInterpreterCallStatus};
use crate::content::{FileCitation, UrlCitation};
use crate::file_search::{FileSearchCall, FileSearchCallStatus, FileSearchResult};
use crate::web_search::{WebSearchAction, WebSearchCall, WebSearchCallStatus, WebSearchSource};

/// How the model is told to cite, in the tool's description and output.
pub const CITATION_INSTRUCTIONS: &str = "Cite a result by writing its file id in square \
brackets, like [file-abc123], right after the sentence it supports.";

/// The tool's description for the model.
pub const FILE_SEARCH_DESCRIPTION: &str =
    "Search the user's uploaded files for passages relevant to \
a natural-language query. Returns the best matching passages with their file ids and names.";

/// The output text of a `file_search` call, from the item.
pub fn file_search_text(call: &FileSearchCall) -> String {
    if matches!(
        call.status,
        FileSearchCallStatus::Failed | FileSearchCallStatus::Incomplete
    ) {
        return format!(
            "Error: {}",
            call.error
                .as_deref()
                .unwrap_or("the file search did not complete")
        );
    }
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
pub fn file_citations(answer: &str, results: &[FileSearchResult]) -> Vec<FileCitation> {
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

// ## web_search

/// The text the model reads for `call`.
pub fn web_search_text(call: &WebSearchCall) -> String {
    if call.status == WebSearchCallStatus::Failed {
        return format!(
            "Error: {}",
            call.error.as_deref().unwrap_or("the web search failed")
        );
    }
    match &call.action {
        WebSearchAction::Search(s) => {
            let query = s.query.as_deref().unwrap_or_default();
            let sources = s.sources.as_deref().unwrap_or_default();
            if sources.is_empty() {
                return format!("No results for {query:?}.");
            }
            let mut out = format!("Results for {query:?}:\n");
            for (i, src) in sources.iter().enumerate() {
                out.push_str(&format!(
                    "\n{}. {}\n   {}\n",
                    i + 1,
                    src.title.as_deref().unwrap_or("(untitled)"),
                    src.url
                ));
                if let Some(snippet) = src.snippet.as_deref().filter(|s| !s.is_empty()) {
                    out.push_str(&format!("   {snippet}\n"));
                }
            }
            out
        }
        WebSearchAction::OpenPage(p) => format!(
            "Page {}:\n\n{}",
            p.url.as_deref().unwrap_or_default(),
            p.content.as_deref().unwrap_or_default()
        ),
        WebSearchAction::FindInPage(p) => format!(
            "Lines of {} containing {:?}:\n\n{}",
            p.url,
            p.pattern,
            p.content.as_deref().unwrap_or_default()
        ),
        _ => "The web search ran.".to_owned(),
    }
}

/// `url_citation`s for every place `text` mentions one of `sources`' URLs
/// (indices count characters, end exclusive), in order, none overlapping.
pub fn url_citations(text: &str, sources: &[WebSearchSource]) -> Vec<UrlCitation> {
    let mut found: Vec<(usize, usize, &WebSearchSource)> = Vec::new();
    for src in sources {
        let url = src.url.as_str();
        if url.is_empty() {
            continue;
        }
        for (at, _) in text.match_indices(url) {
            // A longer URL that merely starts with this one is not a cite.
            let after = text[at + url.len()..].chars().next();
            if after.is_some_and(|c| c.is_alphanumeric() || "/-_.?=&#%".contains(c)) {
                continue;
            }
            found.push((at, at + url.len(), src));
        }
    }
    found.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1)));
    let mut out: Vec<UrlCitation> = Vec::new();
    let mut end = 0;
    for (start, stop, src) in found {
        if start < end {
            continue;
        }
        end = stop;
        out.push(UrlCitation {
            url: src.url.clone(),
            start_index: text[..start].chars().count() as u64,
            end_index: text[..stop].chars().count() as u64,
            title: src.title.clone().unwrap_or_else(|| src.url.clone()),
        });
    }
    out
}

/// The annotations of an answer `text` that cites the results of earlier
/// hosted calls (`items`: the response's output before the answer):
/// `file_citation`s for `[file-…]` markers naming a file of a
/// `file_search_call`, then `url_citation`s for the URLs of a
/// `web_search_call`'s sources.
pub fn answer_citations<'a>(
    text: &str,
    items: impl Iterator<Item = &'a crate::items::Item>,
) -> Vec<crate::content::Annotation> {
    use crate::content::Annotation;
    use crate::items::Item;
    let mut files = Vec::new();
    let mut sources = Vec::new();
    for item in items {
        match item {
            Item::FileSearchCall(c) => files.extend(c.results.iter().flatten().cloned()),
            Item::WebSearchCall(c) => {
                if let WebSearchAction::Search(s) = &c.action {
                    sources.extend(s.sources.iter().flatten().cloned());
                }
            }
            _ => {}
        }
    }
    let mut out: Vec<Annotation> = Vec::new();
    if !files.is_empty() {
        out.extend(
            file_citations(text, &files)
                .into_iter()
                .map(Annotation::FileCitation),
        );
    }
    if !sources.is_empty() {
        out.extend(
            url_citations(text, &sources)
                .into_iter()
                .map(Annotation::UrlCitation),
        );
    }
    out
}

// ## code_interpreter

/// The output text of a `code_interpreter` call, from the item: its logs,
/// the files it left, or why it failed.
pub fn code_interpreter_text(call: &CodeInterpreterCall) -> String {
    let logs = call.logs();
    let mut out = match call.status {
        CodeInterpreterCallStatus::Failed | CodeInterpreterCallStatus::Incomplete => {
            if logs.is_empty() {
                "Error: the code did not run to completion.".to_owned()
            } else {
                format!("Error: the code did not run to completion. Output:\n{logs}")
            }
        }
        _ if logs.is_empty() => "The code ran and printed nothing.".to_owned(),
        _ => logs,
    };
    for f in call.files.iter().flatten() {
        out.push_str(&format!("\n[file {} ({} bytes)]", f.path, f.bytes));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            error: None,
        };
        let text = file_search_text(&call);
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
            file_search_text(&empty),
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
        let c = file_citations(answer, &results);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].file_id.as_str(), c[0].filename.as_str(), c[0].index),
            ("file-1", "policy.md", 21)
        );
        let idx = c[1].index as usize;
        assert_eq!(answer.chars().nth(idx), Some('['));
        assert_eq!(c[1].file_id, "file-2");
        assert!(file_citations("no markers [", &results).is_empty());
    }

    use crate::web_search::{OpenPageAction, SearchAction};

    fn src(url: &str, title: &str) -> WebSearchSource {
        WebSearchSource::url(url, Some(title.into()), Some("about it".into()))
    }

    #[test]
    fn search_results_read_as_a_numbered_list() {
        let call = WebSearchCall {
            id: "ws_1".into(),
            action: WebSearchAction::Search(SearchAction {
                query: Some("tokio".into()),
                queries: None,
                sources: Some(vec![src("https://tokio.rs/", "Tokio")]),
            }),
            status: WebSearchCallStatus::Completed,
            error: None,
        };
        assert_eq!(
            web_search_text(&call),
            "Results for \"tokio\":\n\n1. Tokio\n   https://tokio.rs/\n   about it\n"
        );
        let failed = WebSearchCall {
            status: WebSearchCallStatus::Failed,
            error: Some("the search backend answered HTTP 500".into()),
            ..call.clone()
        };
        assert_eq!(
            web_search_text(&failed),
            "Error: the search backend answered HTTP 500"
        );
        let page = WebSearchCall {
            action: WebSearchAction::OpenPage(OpenPageAction {
                url: Some("https://tokio.rs/".into()),
                content: Some("Tokio is a runtime".into()),
            }),
            ..call
        };
        assert_eq!(
            web_search_text(&page),
            "Page https://tokio.rs/:\n\nTokio is a runtime"
        );
    }

    #[test]
    fn citations_mark_each_cited_url() {
        let sources = [src("https://a.test/x", "A"), src("https://b.test/", "B")];
        let text = "Per https://a.test/x and é https://b.test/, also https://a.test/xyz.";
        let cites = url_citations(text, &sources);
        assert_eq!(cites.len(), 2, "{cites:?}");
        assert_eq!(cites[0].title, "A");
        let chars: Vec<char> = text.chars().collect();
        let span = |c: &UrlCitation| -> String {
            chars[c.start_index as usize..c.end_index as usize]
                .iter()
                .collect()
        };
        assert_eq!(span(&cites[0]), "https://a.test/x");
        assert_eq!(span(&cites[1]), "https://b.test/");
        assert!(url_citations("no links", &sources).is_empty());
    }
}

//! What the model reads for a `web_search_call`, rendered from the item
//! alone (the first time and when a chain replays it), and the
//! `url_citation` annotations of an answer that cites the results.

use windlass_protocol::{
    UrlCitation, WebSearchAction, WebSearchCall, WebSearchCallStatus, WebSearchSource,
};

/// The text the model reads for `call`.
pub fn render(call: &WebSearchCall) -> String {
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
pub fn citations(text: &str, sources: &[WebSearchSource]) -> Vec<UrlCitation> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_protocol::{OpenPageAction, SearchAction};

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
            render(&call),
            "Results for \"tokio\":\n\n1. Tokio\n   https://tokio.rs/\n   about it\n"
        );
        let failed = WebSearchCall {
            status: WebSearchCallStatus::Failed,
            error: Some("the search backend answered HTTP 500".into()),
            ..call.clone()
        };
        assert_eq!(
            render(&failed),
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
            render(&page),
            "Page https://tokio.rs/:\n\nTokio is a runtime"
        );
    }

    #[test]
    fn citations_mark_each_cited_url() {
        let sources = [src("https://a.test/x", "A"), src("https://b.test/", "B")];
        let text = "Per https://a.test/x and é https://b.test/, also https://a.test/xyz.";
        let cites = citations(text, &sources);
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
        assert!(citations("no links", &sources).is_empty());
    }
}

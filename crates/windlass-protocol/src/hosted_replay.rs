//! Hosted calls the gateway runs (`file_search`, `web_search`,
//! `code_interpreter`) as the model sees them: a plain function call and its
//! output, both derived from the stored item alone, so a chain across
//! `previous_response_id` replays exactly what the model saw the first time.
//!
//! Model-facing functions: `file_search(query)`, `web_search(query | url |
//! url + pattern)`, `code_interpreter(code)`. Upstream, a hosted item
//! becomes `function_call` (name = the function, `call_id` = the item's id,
//! arguments rebuilt from the item) + `function_call_output` (the rendered
//! text, [`model_text`]).

use serde_json::{json, Value};

use crate::code_interpreter::{CodeInterpreterCall, CodeInterpreterCallStatus};
use crate::events::EventData;
use crate::file_search::{FileSearchCall, FileSearchCallStatus};
use crate::hosted_render::{code_interpreter_text, file_search_text, web_search_text};
use crate::ids::prefix;
use crate::items::Item;
use crate::tools::Tool;
use crate::web_search::{
    FindInPageAction, OpenPageAction, SearchAction, WebSearchAction, WebSearchCall,
    WebSearchCallStatus,
};

/// A hosted tool type the gateway can run in its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostedKind {
    /// `file_search` over the request's vector stores.
    FileSearch,
    /// `web_search`, `web_search_preview` and their dated aliases.
    WebSearch,
    /// `code_interpreter` in a sandboxed container.
    CodeInterpreter,
}

/// Where a hosted call is in its run, for its stream events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostedStage {
    /// `response.<kind>.in_progress`.
    InProgress,
    /// `searching` (file and web search) or `interpreting` (code).
    Working,
    /// `response.<kind>.completed` (also sent for a failed call: OpenAI has
    /// no `failed` event for these kinds; the item's status says it).
    Completed,
}

impl HostedKind {
    /// The kind of a request tool, when it is one the loop can host.
    pub fn of_tool(tool: &Tool) -> Option<HostedKind> {
        match tool {
            Tool::FileSearch(_) => Some(HostedKind::FileSearch),
            Tool::CodeInterpreter(_) => Some(HostedKind::CodeInterpreter),
            t if t.web_search().is_some() => Some(HostedKind::WebSearch),
            _ => None,
        }
    }

    /// The kind of a hosted item.
    pub fn of_item(item: &Item) -> Option<HostedKind> {
        match item {
            Item::FileSearchCall(_) => Some(HostedKind::FileSearch),
            Item::WebSearchCall(_) => Some(HostedKind::WebSearch),
            Item::CodeInterpreterCall(_) => Some(HostedKind::CodeInterpreter),
            _ => None,
        }
    }

    /// The model-facing function name.
    pub fn function_name(self) -> &'static str {
        match self {
            HostedKind::FileSearch => "file_search",
            HostedKind::WebSearch => "web_search",
            HostedKind::CodeInterpreter => "code_interpreter",
        }
    }

    /// The item's type name (`file_search_call`, ...).
    pub fn item_type(self) -> &'static str {
        match self {
            HostedKind::FileSearch => "file_search_call",
            HostedKind::WebSearch => "web_search_call",
            HostedKind::CodeInterpreter => "code_interpreter_call",
        }
    }

    /// The id prefix of this kind's call items.
    pub fn id_prefix(self) -> &'static str {
        match self {
            HostedKind::FileSearch => prefix::FILE_SEARCH_CALL,
            HostedKind::WebSearch => prefix::WEB_SEARCH_CALL,
            HostedKind::CodeInterpreter => prefix::CODE_INTERPRETER_CALL,
        }
    }

    /// The item a call opens as, `in_progress`, before its arguments are
    /// known.
    pub fn open_item(self, id: String) -> Item {
        match self {
            HostedKind::FileSearch => Item::FileSearchCall(FileSearchCall {
                id,
                queries: Vec::new(),
                status: FileSearchCallStatus::InProgress,
                results: None,
                error: None,
            }),
            HostedKind::WebSearch => Item::WebSearchCall(WebSearchCall {
                id,
                action: WebSearchAction::Search(SearchAction::default()),
                status: WebSearchCallStatus::InProgress,
                error: None,
            }),
            HostedKind::CodeInterpreter => Item::CodeInterpreterCall(CodeInterpreterCall {
                id,
                code: None,
                container_id: String::new(),
                outputs: None,
                status: CodeInterpreterCallStatus::InProgress,
                files: None,
            }),
        }
    }

    /// The stream event of `stage` for the item `item_id` at `output_index`.
    pub fn event(self, stage: HostedStage, item_id: String, output_index: usize) -> EventData {
        use HostedKind as K;
        use HostedStage as S;
        match (self, stage) {
            (K::FileSearch, S::InProgress) => EventData::FileSearchCallInProgress {
                item_id,
                output_index,
            },
            (K::FileSearch, S::Working) => EventData::FileSearchCallSearching {
                item_id,
                output_index,
            },
            (K::FileSearch, S::Completed) => EventData::FileSearchCallCompleted {
                item_id,
                output_index,
            },
            (K::WebSearch, S::InProgress) => EventData::WebSearchCallInProgress {
                item_id,
                output_index,
            },
            (K::WebSearch, S::Working) => EventData::WebSearchCallSearching {
                item_id,
                output_index,
            },
            (K::WebSearch, S::Completed) => EventData::WebSearchCallCompleted {
                item_id,
                output_index,
            },
            (K::CodeInterpreter, S::InProgress) => EventData::CodeInterpreterCallInProgress {
                item_id,
                output_index,
            },
            (K::CodeInterpreter, S::Working) => EventData::CodeInterpreterCallInterpreting {
                item_id,
                output_index,
            },
            (K::CodeInterpreter, S::Completed) => EventData::CodeInterpreterCallCompleted {
                item_id,
                output_index,
            },
        }
    }
}

/// Writes what the model asked for (its JSON arguments) into an open
/// hosted item: the query, the page, the code. Arguments that do not parse
/// leave the item as it is (the executor reports the error).
pub fn apply_arguments(item: &mut Item, arguments: &str) {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let text = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match item {
        Item::FileSearchCall(c) => c.queries = text("query").into_iter().collect(),
        Item::WebSearchCall(c) => {
            c.action = match (text("query"), text("url"), text("pattern")) {
                (_, Some(url), Some(pattern)) => WebSearchAction::FindInPage(FindInPageAction {
                    url,
                    pattern,
                    content: None,
                }),
                (_, Some(url), None) => WebSearchAction::OpenPage(OpenPageAction {
                    url: Some(url),
                    content: None,
                }),
                (query, None, _) => WebSearchAction::Search(SearchAction {
                    queries: query.clone().map(|q| vec![q]),
                    query,
                    sources: None,
                }),
            }
        }
        Item::CodeInterpreterCall(c) => c.code = text("code"),
        _ => {}
    }
}

/// Marks a hosted item as failed (or not run) with the reason the model is
/// told.
pub fn fail(item: &mut Item, reason: String) {
    match item {
        Item::FileSearchCall(c) => {
            c.status = FileSearchCallStatus::Failed;
            c.error = Some(reason);
        }
        Item::WebSearchCall(c) => {
            c.status = WebSearchCallStatus::Failed;
            c.error = Some(reason);
        }
        Item::CodeInterpreterCall(c) => {
            c.status = CodeInterpreterCallStatus::Failed;
            let logs = crate::code_interpreter::OutputLogs { logs: reason };
            c.outputs = Some(vec![crate::code_interpreter::CodeInterpreterOutput::Logs(
                logs,
            )]);
        }
        _ => {}
    }
}

/// Whether a hosted item finished without error.
pub fn succeeded(item: &Item) -> bool {
    match item {
        Item::FileSearchCall(c) => c.status == FileSearchCallStatus::Completed,
        Item::WebSearchCall(c) => c.status == WebSearchCallStatus::Completed,
        Item::CodeInterpreterCall(c) => c.status == CodeInterpreterCallStatus::Completed,
        _ => false,
    }
}

/// Whether a hosted item is still waiting to run (`in_progress`, or in
/// its working stage).
pub fn is_open(item: &Item) -> bool {
    match item {
        Item::FileSearchCall(c) => matches!(
            c.status,
            FileSearchCallStatus::InProgress | FileSearchCallStatus::Searching
        ),
        Item::WebSearchCall(c) => matches!(
            c.status,
            WebSearchCallStatus::InProgress | WebSearchCallStatus::Searching
        ),
        Item::CodeInterpreterCall(c) => matches!(
            c.status,
            CodeInterpreterCallStatus::InProgress | CodeInterpreterCallStatus::Interpreting
        ),
        _ => false,
    }
}

/// Sets the working stage's status (`searching`, `interpreting`).
pub fn mark_working(item: &mut Item) {
    match item {
        Item::FileSearchCall(c) => c.status = FileSearchCallStatus::Searching,
        Item::WebSearchCall(c) => c.status = WebSearchCallStatus::Searching,
        Item::CodeInterpreterCall(c) => c.status = CodeInterpreterCallStatus::Interpreting,
        _ => {}
    }
}

/// The function call a hosted item replays as: `(name, arguments)`.
pub fn replay_call(item: &Item) -> Option<(&'static str, String)> {
    let kind = HostedKind::of_item(item)?;
    let args = match item {
        Item::FileSearchCall(c) => json!({"query": c.queries.join(" ")}),
        Item::WebSearchCall(c) => match &c.action {
            WebSearchAction::Search(s) => json!({"query": s.query.clone().unwrap_or_default()}),
            WebSearchAction::OpenPage(p) => json!({"url": p.url.clone().unwrap_or_default()}),
            WebSearchAction::FindInPage(p) => json!({"url": p.url, "pattern": p.pattern}),
            WebSearchAction::Unknown(v) => v.clone(),
        },
        Item::CodeInterpreterCall(c) => json!({"code": c.code.clone().unwrap_or_default()}),
        _ => return None,
    };
    Some((kind.function_name(), args.to_string()))
}

/// The text the model reads as the call's output.
pub fn model_text(item: &Item) -> Option<String> {
    match item {
        Item::FileSearchCall(c) => Some(file_search_text(c)),
        Item::WebSearchCall(c) => Some(web_search_text(c)),
        Item::CodeInterpreterCall(c) => Some(code_interpreter_text(c)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_fill_the_item_and_replay_the_same_call() {
        let mut item = HostedKind::WebSearch.open_item("ws_1".into());
        apply_arguments(&mut item, r#"{"url":"https://a.test/","pattern":"x"}"#);
        let (name, args) = replay_call(&item).unwrap();
        assert_eq!(name, "web_search");
        let v: Value = serde_json::from_str(&args).unwrap();
        assert_eq!(v, json!({"url": "https://a.test/", "pattern": "x"}));

        let mut fs = HostedKind::FileSearch.open_item("fs_1".into());
        apply_arguments(&mut fs, r#"{"query":"refunds"}"#);
        assert_eq!(replay_call(&fs).unwrap().1, r#"{"query":"refunds"}"#);
        assert!(is_open(&fs) && !succeeded(&fs));
        fail(&mut fs, "no such vector store".into());
        assert_eq!(model_text(&fs).unwrap(), "Error: no such vector store");
        assert!(!is_open(&fs));
    }

    #[test]
    fn a_failed_code_run_tells_the_model_why() {
        let mut ci = HostedKind::CodeInterpreter.open_item("ci_1".into());
        apply_arguments(&mut ci, r#"{"code":"print(1)"}"#);
        fail(&mut ci, "sandbox unavailable".into());
        let text = model_text(&ci).unwrap();
        assert!(text.contains("sandbox unavailable"), "{text}");
        assert_eq!(replay_call(&ci).unwrap().1, r#"{"code":"print(1)"}"#);
    }
}

//! Hosted calls as Anthropic's server tool blocks, both ways: a
//! `web_search_call` is `server_tool_use` (`web_search`) then
//! `web_search_tool_result`; a `code_interpreter_call` is
//! `server_tool_use` (`code_execution`) then `code_execution_tool_result`.
//! A client that sends those blocks back gets the same hosted item again,
//! so the model reads the call as it did the first time (the item's text is
//! rendered by the one function the Responses surface replays with).

use serde_json::{json, Value};
use windlass_protocol::anthropic::{
    CodeExecutionResult, CodeExecutionToolResultContent, OutputBlock, ToolResultError,
    WebSearchResult, WebSearchToolResultContent,
};
use windlass_protocol::hosted_replay::{apply_arguments, replay_call, HostedKind};
use windlass_protocol::{
    CodeInterpreterCall, CodeInterpreterCallStatus, CodeInterpreterOutput, Item, OutputLogs,
    WebSearchAction, WebSearchCall, WebSearchCallStatus, WebSearchSource,
};

use super::blocks::invalid;
use crate::error::ApiError;

/// The `server_tool_use` name of a hosted item's kind.
fn tool_name(item: &Item) -> Option<&'static str> {
    match item {
        Item::WebSearchCall(_) => Some("web_search"),
        Item::CodeInterpreterCall(_) => Some("code_execution"),
        _ => None,
    }
}

/// `server_tool_use` and its result block, for a hosted item the surface
/// shows (none for other items).
pub(crate) fn blocks(item: &Item) -> Option<[OutputBlock; 2]> {
    let name = tool_name(item)?;
    let (_, arguments) = replay_call(item)?;
    let id = item.id()?.to_owned();
    let input = serde_json::from_str(&arguments).unwrap_or_else(|_| json!({}));
    let result = match item {
        Item::WebSearchCall(c) => OutputBlock::WebSearchToolResult {
            tool_use_id: id.clone(),
            content: web_search_content(c),
        },
        Item::CodeInterpreterCall(c) => OutputBlock::CodeExecutionToolResult {
            tool_use_id: id.clone(),
            content: code_content(c),
        },
        _ => return None,
    };
    let call = OutputBlock::ServerToolUse {
        id,
        name: name.to_owned(),
        input,
    };
    Some([call, result])
}

fn web_search_content(c: &WebSearchCall) -> WebSearchToolResultContent {
    if c.status == WebSearchCallStatus::Failed {
        return WebSearchToolResultContent::Error(ToolResultError {
            kind: "web_search_tool_result_error".to_owned(),
            error_code: "unavailable".to_owned(),
        });
    }
    let result = |url: &str, title: Option<&str>, text: Option<&str>| WebSearchResult {
        kind: WebSearchResult::TYPE.to_owned(),
        url: url.to_owned(),
        title: title.unwrap_or(url).to_owned(),
        encrypted_content: text.unwrap_or_default().to_owned(),
        page_age: None,
    };
    let results = match &c.action {
        WebSearchAction::Search(s) => s
            .sources
            .iter()
            .flatten()
            .map(|src| result(&src.url, src.title.as_deref(), src.snippet.as_deref()))
            .collect(),
        WebSearchAction::OpenPage(p) => p
            .url
            .iter()
            .map(|url| result(url, None, p.content.as_deref()))
            .collect(),
        WebSearchAction::FindInPage(p) => vec![result(&p.url, None, p.content.as_deref())],
        _ => Vec::new(),
    };
    WebSearchToolResultContent::Results(results)
}

fn code_content(c: &CodeInterpreterCall) -> CodeExecutionToolResultContent {
    let failed = matches!(
        c.status,
        CodeInterpreterCallStatus::Failed | CodeInterpreterCallStatus::Incomplete
    );
    let logs = c.logs();
    CodeExecutionToolResultContent::Result(CodeExecutionResult {
        kind: CodeExecutionResult::TYPE.to_owned(),
        // The interpreter keeps one log (stdout and stderr as printed) and
        // no exit status: a Python error is in that log with code 0; a run
        // that did not complete (timeout, sandbox error) is stderr, code 1.
        stdout: if failed { String::new() } else { logs.clone() },
        stderr: if failed { logs } else { String::new() },
        return_code: i64::from(failed),
        content: Vec::new(),
    })
}

/// A `server_tool_use` block a client sent back, waiting for its result.
pub(crate) struct PendingUse {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// The hosted item a `server_tool_use` and its `web_search_tool_result`
/// stand for; `None` when the use is not a web search.
pub(crate) fn web_search_item(
    used: &PendingUse,
    content: WebSearchToolResultContent,
) -> Option<Item> {
    if used.name != "web_search" {
        return None;
    }
    let mut item = HostedKind::WebSearch.open_item(used.id.clone());
    apply_arguments(&mut item, &used.input.to_string());
    let Item::WebSearchCall(call) = &mut item else {
        return None;
    };
    match content {
        WebSearchToolResultContent::Error(e) => {
            call.status = WebSearchCallStatus::Failed;
            call.error = Some(format!("the web search failed ({})", e.error_code));
        }
        WebSearchToolResultContent::Results(results) => {
            call.status = WebSearchCallStatus::Completed;
            let first = results.first().map(|r| r.encrypted_content.clone());
            match &mut call.action {
                WebSearchAction::Search(s) => {
                    s.sources = Some(
                        results
                            .into_iter()
                            .map(|r| {
                                let snippet = Some(r.encrypted_content).filter(|s| !s.is_empty());
                                WebSearchSource::url(r.url, Some(r.title), snippet)
                            })
                            .collect(),
                    )
                }
                WebSearchAction::OpenPage(p) => p.content = first,
                WebSearchAction::FindInPage(p) => p.content = first,
                _ => {}
            }
        }
    }
    Some(item)
}

/// The hosted item a `server_tool_use` and its `code_execution_tool_result`
/// stand for; `None` when the use is not code execution.
pub(crate) fn code_item(
    used: &PendingUse,
    content: CodeExecutionToolResultContent,
) -> Option<Item> {
    if used.name != "code_execution" {
        return None;
    }
    let mut item = HostedKind::CodeInterpreter.open_item(used.id.clone());
    apply_arguments(&mut item, &used.input.to_string());
    let Item::CodeInterpreterCall(call) = &mut item else {
        return None;
    };
    let (status, logs) = match content {
        CodeExecutionToolResultContent::Error(e) => (
            CodeInterpreterCallStatus::Failed,
            format!("the code did not run ({})", e.error_code),
        ),
        CodeExecutionToolResultContent::Result(r) => {
            let status = if r.return_code == 0 {
                CodeInterpreterCallStatus::Completed
            } else {
                CodeInterpreterCallStatus::Failed
            };
            (status, format!("{}{}", r.stdout, r.stderr))
        }
    };
    call.status = status;
    call.outputs = Some(vec![CodeInterpreterOutput::Logs(OutputLogs { logs })]);
    Some(item)
}

/// The pending `server_tool_use` a result block answers.
pub(crate) fn take_use(
    at: &str,
    pending: &mut Vec<PendingUse>,
    id: &str,
) -> Result<PendingUse, ApiError> {
    match pending.iter().position(|u| u.id == id) {
        Some(i) => Ok(pending.remove(i)),
        None => Err(invalid(
            &format!("{at}.tool_use_id"),
            format!("no `server_tool_use` block with id `{id}` comes before this result"),
        )),
    }
}

/// The hosted item, or a 400 when the result block does not fit the use.
pub(crate) fn hosted_or_refuse(
    at: &str,
    item: Option<Item>,
    used: PendingUse,
) -> Result<Item, ApiError> {
    item.ok_or_else(|| {
        invalid(
            &format!("{at}.type"),
            format!(
                "this result block does not answer the server tool `{}`",
                used.name
            ),
        )
    })
}

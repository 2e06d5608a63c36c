//! Anthropic's server tool types in `tools`, mapped onto Windlass's hosted
//! executors: `web_search_*` onto `web_search`, `code_execution_*` onto
//! `code_interpreter` (Python in the operator's sandbox). The engine's
//! prepare decides whether an executor serves them (400 naming what the
//! operator must configure when none does). Types with no executor here
//! (`web_fetch_*`, `tool_search_*`) are refused by name.

use serde_json::Value;
use windlass_protocol::anthropic::ToolDefinition;
use windlass_protocol::{
    CodeInterpreterContainer, CodeInterpreterTool, LocationKind, Tool, UserLocation,
    WebSearchFilters, WebSearchTool, INCLUDE_CODE_INTERPRETER_OUTPUTS, INCLUDE_WEB_SEARCH_SOURCES,
};

use super::blocks::invalid;
use crate::error::ApiError;

/// What the request's server tools add to the engine's request.
#[derive(Debug, Default)]
pub(crate) struct ServerTools {
    pub tools: Vec<Tool>,
    /// The smallest `max_uses` given: the response's `max_tool_calls`.
    pub max_uses: Option<u64>,
    /// `include` values that keep what the blocks show (the results, the
    /// output) on the items the surface reads.
    pub include: Vec<String>,
    /// Each server tool as the client named it: its path (`tools.N`), its
    /// type and the hosted tool's name (for refusals after prepare).
    pub declared: Vec<Declared>,
}

#[derive(Debug, Clone)]
pub(crate) struct Declared {
    pub path: String,
    pub kind: String,
    pub hosted: &'static str,
}

/// Settings every server tool may carry that change nothing here: how
/// Anthropic caches, loads or lets code call the tool.
const HINTS: [&str; 4] = [
    "cache_control",
    "defer_loading",
    "strict",
    "allowed_callers",
];

/// Whether `kind` is one of Anthropic's server tool types.
pub(crate) fn is_server_tool(kind: &str) -> bool {
    [
        "web_search_",
        "web_fetch_",
        "code_execution_",
        "tool_search_",
    ]
    .iter()
    .any(|p| kind.starts_with(p))
}

/// The server tools of `tools` (each with its index), in order.
pub(crate) fn translate(tools: Vec<(usize, ToolDefinition)>) -> Result<ServerTools, ApiError> {
    let mut out = ServerTools::default();
    for (i, def) in tools {
        let path = format!("tools.{i}");
        let kind = def.kind.clone().unwrap_or_default();
        let (tool, name, include) = if kind.starts_with("web_search_") {
            (
                web_search(&path, &def)?,
                "web_search",
                INCLUDE_WEB_SEARCH_SOURCES,
            )
        } else if kind.starts_with("code_execution_") {
            check_settings(&path, &def, &[])?;
            let tool = Tool::CodeInterpreter(CodeInterpreterTool {
                container: CodeInterpreterContainer::Auto(Default::default()),
                allowed_callers: None,
            });
            (tool, "code_execution", INCLUDE_CODE_INTERPRETER_OUTPUTS)
        } else {
            return Err(invalid(
                &format!("{path}.type"),
                format!(
                    "the server tool `{kind}` is not available on this server: Windlass runs \
                     `web_search_*` and `code_execution_*` (when the operator configured them); \
                     use the operator's MCP servers (`mcp_servers`) instead"
                ),
            )
            .code("unsupported_tool_type"));
        };
        if def.name.as_deref() != Some(name) {
            return Err(invalid(
                &format!("{path}.name"),
                format!("Input should be '{name}'"),
            ));
        }
        if let Some(n) = def.settings.get("max_uses") {
            let n = n.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                invalid(
                    &format!("{path}.max_uses"),
                    "Input should be greater than or equal to 1",
                )
            })?;
            out.max_uses = Some(out.max_uses.map_or(n, |m: u64| m.min(n)));
        }
        out.declared.push(Declared {
            path,
            kind,
            hosted: match &tool {
                Tool::CodeInterpreter(_) => "code_interpreter",
                _ => "web_search",
            },
        });
        out.tools.push(tool);
        if !out.include.iter().any(|v| v == include) {
            out.include.push(include.to_owned());
        }
    }
    Ok(out)
}

/// `web_search_*`: `allowed_domains` and `user_location` carry over;
/// `blocked_domains` has no counterpart in the search backends and is
/// refused by name.
fn web_search(path: &str, def: &ToolDefinition) -> Result<Tool, ApiError> {
    check_settings(
        path,
        def,
        &[
            "max_uses",
            "allowed_domains",
            "user_location",
            "blocked_domains",
        ],
    )?;
    let blocked = def.settings.get("blocked_domains");
    if blocked.is_some_and(|b| b.as_array().is_some_and(|a| !a.is_empty())) {
        return Err(invalid(
            &format!("{path}.blocked_domains"),
            "blocked domains are not supported by Windlass's web search; use `allowed_domains`",
        ));
    }
    let allowed = match def.settings.get("allowed_domains") {
        None | Some(Value::Null) => None,
        Some(v) => Some(strings(&format!("{path}.allowed_domains"), v)?),
    };
    let user_location = match def.settings.get("user_location") {
        None | Some(Value::Null) => None,
        Some(v) => Some(location(&format!("{path}.user_location"), v)?),
    };
    Ok(Tool::WebSearch(WebSearchTool {
        filters: allowed.map(|d| WebSearchFilters {
            allowed_domains: Some(d),
        }),
        user_location,
        ..WebSearchTool::default()
    }))
}

/// Refuses a setting the tool type does not take (as Anthropic does).
fn check_settings(path: &str, def: &ToolDefinition, known: &[&str]) -> Result<(), ApiError> {
    if def.input_schema.is_some() || def.description.is_some() {
        let field = if def.input_schema.is_some() {
            "input_schema"
        } else {
            "description"
        };
        return Err(invalid(
            &format!("{path}.{field}"),
            "Extra inputs are not permitted",
        ));
    }
    let extra = def
        .settings
        .keys()
        .find(|k| !known.contains(&k.as_str()) && !HINTS.contains(&k.as_str()));
    match extra {
        Some(k) => Err(invalid(
            &format!("{path}.{k}"),
            "Extra inputs are not permitted",
        )),
        None => Ok(()),
    }
}

fn strings(path: &str, v: &Value) -> Result<Vec<String>, ApiError> {
    v.as_array()
        .and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| invalid(path, "Input should be a valid list of strings"))
}

fn location(path: &str, v: &Value) -> Result<UserLocation, ApiError> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    if !v.is_object() || v.get("type").and_then(Value::as_str) != Some("approximate") {
        return Err(invalid(
            &format!("{path}.type"),
            "Input should be 'approximate'",
        ));
    }
    Ok(UserLocation {
        kind: Some(LocationKind::Approximate),
        city: text("city"),
        country: text("country"),
        region: text("region"),
        timezone: text("timezone"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defs(tools: Value) -> Vec<(usize, ToolDefinition)> {
        serde_json::from_value::<Vec<ToolDefinition>>(tools)
            .unwrap()
            .into_iter()
            .enumerate()
            .collect()
    }

    #[test]
    fn web_search_and_code_execution_become_hosted_tools() {
        let out = translate(defs(json!([
            {"type": "web_search_20260209", "name": "web_search", "max_uses": 5,
             "allowed_domains": ["tokio.rs"], "cache_control": {"type": "ephemeral"},
             "user_location": {"type": "approximate", "city": "Paris", "country": "FR"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
            {"type": "code_execution_20250825", "name": "code_execution"}
        ])))
        .unwrap();
        let Tool::WebSearch(search) = &out.tools[0] else {
            panic!("{:?}", out.tools[0]);
        };
        assert_eq!(search.allowed_domains(), ["tokio.rs"]);
        let at = search.user_location.as_ref().unwrap();
        assert_eq!(
            (at.city.as_deref(), at.country.as_deref()),
            (Some("Paris"), Some("FR"))
        );
        assert!(matches!(out.tools[2], Tool::CodeInterpreter(_)));
        assert_eq!(out.max_uses, Some(2), "the smallest budget");
        assert_eq!(
            out.include,
            [INCLUDE_WEB_SEARCH_SOURCES, INCLUDE_CODE_INTERPRETER_OUTPUTS]
        );
        let hosted: Vec<_> = out
            .declared
            .iter()
            .map(|d| (d.path.as_str(), d.hosted))
            .collect();
        assert_eq!(
            hosted,
            [
                ("tools.0", "web_search"),
                ("tools.1", "web_search"),
                ("tools.2", "code_interpreter")
            ]
        );
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_by_path() {
        for (tool, path) in [
            (
                json!({"type": "web_search_20250305", "name": "search"}),
                "tools.0.name",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search",
                    "blocked_domains": ["a.test"]}),
                "tools.0.blocked_domains",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 0}),
                "tools.0.max_uses",
            ),
            (
                json!({"type": "web_search_20250305", "name": "web_search", "nope": 1}),
                "tools.0.nope",
            ),
            (
                json!({"type": "web_fetch_20250910", "name": "web_fetch"}),
                "tools.0.type",
            ),
            (
                json!({"type": "code_execution_20250522", "name": "code_execution",
                    "input_schema": {}}),
                "tools.0.input_schema",
            ),
            (
                json!({"type": "code_execution_20250522", "name": "code_execution", "max_uses": 1}),
                "tools.0.max_uses",
            ),
        ] {
            let err = translate(defs(json!([tool]))).unwrap_err();
            let shown = format!("{err:?}");
            assert!(shown.contains(path), "{path}: {shown}");
        }
    }
}

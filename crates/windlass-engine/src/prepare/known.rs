//! The tool names a request may refer to (in `allowed_tools` and
//! `tool_choice`) before its MCP servers are listed.

use std::collections::HashSet;

use crate::error::EngineError;

/// Tool names a request may refer to before its MCP servers are listed.
pub(super) struct Known<'a> {
    pub names: &'a HashSet<String>,
    /// `label__` of each declared MCP server.
    pub prefixes: Vec<String>,
}

impl Known<'_> {
    pub(super) fn contains(&self, name: &str) -> bool {
        self.names.contains(name) || self.prefixes.iter().any(|p| name.starts_with(p.as_str()))
    }
}

pub(super) fn check_names<'a>(
    list: impl IntoIterator<Item = &'a str>,
    known: &Known<'_>,
    param: &str,
) -> Result<(), EngineError> {
    for name in list {
        if !known.contains(name) {
            return Err(EngineError::invalid(
                format!("Tool '{name}' is not among the request's tools."),
                Some(param.to_owned()),
            ));
        }
    }
    Ok(())
}

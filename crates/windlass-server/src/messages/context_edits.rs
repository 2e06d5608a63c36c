//! `context_management.edits`, each mapped onto what Windlass does or
//! refused by name:
//!
//! - `clear_thinking_20251015` (Claude Code sends `keep: "all"`): thinking
//!   blocks of all but the last `keep` assistant turns are left out of what
//!   the model reads; applied here, to the conversation as sent (the
//!   Messages API is stateless, so that is the whole conversation).
//! - `compact_20260112`: the engine's compaction (`context_management`
//!   `compaction` on the Responses surface) at the trigger's token count;
//!   the summary comes back as a `compaction` block.
//! - `clear_tool_uses_20250919`: refused: the engine has no step that
//!   clears old tool results in place (compaction summarises instead).

use serde_json::Value;
use windlass_protocol::anthropic::{
    ContextManagementConfig, InputContent, InputMessage, MessageRole,
};
use windlass_protocol::ContextManagement;

use super::blocks::invalid;
use crate::error::ApiError;

/// Anthropic's default compaction trigger, in input tokens.
const DEFAULT_COMPACT_TRIGGER: u64 = 150_000;

/// Applies the edits that act on the conversation as sent and returns the
/// engine's `context_management` for the others.
pub(crate) fn apply(
    config: Option<ContextManagementConfig>,
    thinking_on: bool,
    messages: &mut [InputMessage],
) -> Result<Option<Vec<ContextManagement>>, ApiError> {
    let mut engine = Vec::new();
    for (i, edit) in config
        .map(|c| c.edits)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let path = format!("context_management.edits.{i}");
        let kind = edit.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "clear_thinking_20251015" => {
                if !thinking_on {
                    return Err(invalid(
                        &format!("{path}.type"),
                        "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive",
                    ));
                }
                if let Some(keep) = thinking_turns(&path, edit)? {
                    clear_thinking(messages, keep);
                }
            }
            "compact_20260112" => engine.push(compaction(&path, edit)?),
            "clear_tool_uses_20250919" => {
                return Err(invalid(
                    &format!("{path}.type"),
                    "clearing old tool results is not supported by Windlass (the model reads \
                     every tool result as sent); use `compact_20260112`, which summarises \
                     earlier context once it passes a token count",
                ))
            }
            other => {
                return Err(invalid(
                    &format!("{path}.type"),
                    format!(
                        "Input tag '{other}' does not match any of the expected tags: \
                         'clear_thinking_20251015', 'compact_20260112', 'clear_tool_uses_20250919'"
                    ),
                ))
            }
        }
    }
    Ok((!engine.is_empty()).then_some(engine))
}

/// `keep`: `"all"` or `{"type": "all"}` (nothing cleared: `None`), or
/// `{"type": "thinking_turns", "value": N}`; one turn when absent.
fn thinking_turns(path: &str, edit: &Value) -> Result<Option<usize>, ApiError> {
    let keep = match edit.get("keep") {
        None | Some(Value::Null) => return Ok(Some(1)),
        Some(k) => k,
    };
    if keep == "all" || keep.get("type").and_then(Value::as_str) == Some("all") {
        return Ok(None);
    }
    let turns = (keep.get("type").and_then(Value::as_str) == Some("thinking_turns"))
        .then(|| keep.get("value").and_then(Value::as_u64))
        .flatten()
        .filter(|n| *n >= 1);
    match turns {
        Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        None => Err(invalid(
            &format!("{path}.keep"),
            "Input should be 'all', {\"type\": \"all\"} or {\"type\": \"thinking_turns\", \"value\": N >= 1}",
        )),
    }
}

/// Drops thinking blocks from every assistant message but the last `keep`.
fn clear_thinking(messages: &mut [InputMessage], keep: usize) {
    let assistant: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == MessageRole::Assistant)
        .map(|(i, _)| i)
        .collect();
    let older = assistant.len().saturating_sub(keep);
    for &i in &assistant[..older] {
        if let InputContent::Blocks(blocks) = &mut messages[i].content {
            blocks.retain(|b| {
                let kind = b.get("type").and_then(Value::as_str);
                !matches!(kind, Some("thinking" | "redacted_thinking"))
            });
        }
    }
}

/// `compact_20260112` as the engine's compaction. Windlass summarises with
/// its own prompt and goes on answering, so `instructions` and
/// `pause_after_compaction: true` are refused by name.
fn compaction(path: &str, edit: &Value) -> Result<ContextManagement, ApiError> {
    if let Some(k) = edit.as_object().and_then(|o| {
        o.keys().find(|k| {
            !["type", "trigger", "instructions", "pause_after_compaction"].contains(&k.as_str())
        })
    }) {
        return Err(invalid(
            &format!("{path}.{k}"),
            "Extra inputs are not permitted",
        ));
    }
    if edit.get("instructions").is_some_and(|v| !v.is_null()) {
        return Err(invalid(
            &format!("{path}.instructions"),
            "custom summary instructions are not supported by Windlass (it summarises with its own prompt)",
        ));
    }
    if edit.get("pause_after_compaction") == Some(&Value::Bool(true)) {
        return Err(invalid(
            &format!("{path}.pause_after_compaction"),
            "pausing after compaction is not supported by Windlass (the answer follows the summary)",
        ));
    }
    let trigger =
        match edit.get("trigger") {
            None | Some(Value::Null) => DEFAULT_COMPACT_TRIGGER,
            Some(t) => {
                let value = (t.get("type").and_then(Value::as_str) == Some("input_tokens"))
                    .then(|| t.get("value").and_then(Value::as_u64))
                    .flatten();
                match value {
                    Some(v) if v >= 1 => v,
                    _ => return Err(invalid(
                        &format!("{path}.trigger"),
                        "Input should be {\"type\": \"input_tokens\", \"value\": N} with N >= 1",
                    )),
                }
            }
        };
    Ok(ContextManagement {
        kind: ContextManagement::COMPACTION.to_owned(),
        compact_threshold: Some(trigger),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn conversation() -> Vec<InputMessage> {
        let thought = |t: &str| json!({"type": "thinking", "thinking": t, "signature": "s"});
        serde_json::from_value(json!([
            {"role": "user", "content": "1"},
            {"role": "assistant", "content": [thought("a"), {"type": "text", "text": "x"}]},
            {"role": "user", "content": "2"},
            {"role": "assistant", "content": [thought("b"), {"type": "text", "text": "y"}]},
            {"role": "user", "content": "3"},
            {"role": "assistant", "content": [thought("c"), {"type": "text", "text": "z"}]},
        ]))
        .unwrap()
    }

    fn thoughts(messages: &[InputMessage]) -> Vec<String> {
        messages
            .iter()
            .filter_map(|m| match &m.content {
                InputContent::Blocks(b) => Some(b.clone()),
                InputContent::Text(_) => None,
            })
            .flatten()
            .filter_map(|b| b.get("thinking").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }

    fn edits(edits: Value) -> Option<ContextManagementConfig> {
        Some(serde_json::from_value(json!({ "edits": edits })).unwrap())
    }

    #[test]
    fn clear_thinking_keeps_the_last_turns() {
        for (keep, left) in [
            (json!("all"), vec!["a", "b", "c"]),
            (json!({"type": "all"}), vec!["a", "b", "c"]),
            (
                json!({"type": "thinking_turns", "value": 2}),
                vec!["b", "c"],
            ),
            (Value::Null, vec!["c"]),
        ] {
            let mut m = conversation();
            let config = edits(json!([{"type": "clear_thinking_20251015", "keep": keep}]));
            let engine = apply(config, true, &mut m).unwrap();
            assert_eq!(engine, None);
            assert_eq!(thoughts(&m), left, "{keep}");
        }
    }

    #[test]
    fn compaction_becomes_the_engines_at_the_trigger() {
        let mut m = conversation();
        let config = edits(json!([{"type": "compact_20260112",
                                   "trigger": {"type": "input_tokens", "value": 80000}},
                                  {"type": "clear_thinking_20251015", "keep": "all"}]));
        let engine = apply(config, true, &mut m).unwrap().unwrap();
        assert_eq!(engine[0].kind, ContextManagement::COMPACTION);
        assert_eq!(engine[0].compact_threshold, Some(80_000));
        let config = edits(json!([{"type": "compact_20260112"}]));
        let engine = apply(config, false, &mut m).unwrap().unwrap();
        assert_eq!(engine[0].compact_threshold, Some(DEFAULT_COMPACT_TRIGGER));
    }

    #[test]
    fn refusals_name_the_edit() {
        for (edit, thinking, path) in [
            (
                json!({"type": "clear_thinking_20251015"}),
                false,
                "context_management.edits.0.type",
            ),
            (
                json!({"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 0}}),
                true,
                "context_management.edits.0.keep",
            ),
            (
                json!({"type": "clear_tool_uses_20250919"}),
                true,
                "context_management.edits.0.type",
            ),
            (
                json!({"type": "compact_20260112", "trigger": {"type": "tool_uses", "value": 3}}),
                true,
                "context_management.edits.0.trigger",
            ),
        ] {
            let err = apply(edits(json!([edit])), thinking, &mut conversation()).unwrap_err();
            let shown = format!("{err:?}");
            assert!(shown.contains(path), "{path}: {shown}");
        }
    }
}

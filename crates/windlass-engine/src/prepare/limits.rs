//! The loop's limits for one response: the server's, lowered (never
//! raised) by the request's `metadata`.

use serde_json::{Map, Value};
use windlass_protocol::CreateResponseRequest;

use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::techniques::{Techniques, META_TECHNIQUES};

/// `metadata` key lowering the model-turn limit.
pub const META_MAX_TURNS: &str = "windlass_max_turns";
/// `metadata` key lowering the tool calls one model turn may make.
pub const META_MAX_TOOL_CALLS_PER_TURN: &str = "windlass_max_tool_calls_per_turn";
/// `metadata` key lowering the consecutive failed calls that end a response.
pub const META_TOOL_ERROR_THRESHOLD: &str = "windlass_tool_error_threshold";

/// Effective limits of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub max_turns: u32,
    /// Effective `max_tool_calls`.
    pub call_budget: u64,
    pub per_turn: Option<u32>,
    pub error_threshold: Option<u32>,
    /// The server's techniques, changed by the request's metadata.
    pub techniques: Techniques,
}

/// `caller`: the caller's techniques (an API key's) instead of the server's.
pub(crate) fn limits(
    config: &EngineConfig,
    req: &CreateResponseRequest,
    caller: Option<Techniques>,
) -> Result<Limits, EngineError> {
    let empty = Map::new();
    let meta = req.metadata.as_ref().unwrap_or(&empty);
    let max_turns = lowered(
        Some(config.max_agentic_turns),
        requested(meta, META_MAX_TURNS)?,
    )
    .unwrap_or(config.max_agentic_turns);
    Ok(Limits {
        max_turns,
        call_budget: req
            .max_tool_calls
            .unwrap_or(u64::MAX)
            .min(config.max_tool_calls),
        per_turn: lowered(
            config.max_tool_calls_per_turn,
            requested(meta, META_MAX_TOOL_CALLS_PER_TURN)?,
        ),
        error_threshold: lowered(
            config.tool_error_threshold,
            requested(meta, META_TOOL_ERROR_THRESHOLD)?,
        ),
        techniques: techniques(caller.unwrap_or_else(|| config.server_techniques()), meta)?,
    })
}

/// The server's (or the caller's) techniques, changed by
/// `metadata.windlass_techniques`.
fn techniques(server: Techniques, meta: &Map<String, Value>) -> Result<Techniques, EngineError> {
    let Some(v) = meta.get(META_TECHNIQUES) else {
        return Ok(server);
    };
    let param = format!("metadata.{META_TECHNIQUES}");
    let Value::String(list) = v else {
        return Err(EngineError::invalid_code(
            format!("Invalid value for metadata '{META_TECHNIQUES}': expected a comma-separated string."),
            Some(&param),
            "invalid_value",
        ));
    };
    server.apply(list).map_err(|e| {
        EngineError::invalid_code(
            format!("Invalid value for metadata '{META_TECHNIQUES}': {e}."),
            Some(&param),
            "invalid_value",
        )
    })
}

/// The smaller of two limits, `None` meaning unlimited.
fn lowered(server: Option<u32>, request: Option<u32>) -> Option<u32> {
    match (server, request) {
        (Some(s), Some(r)) => Some(s.min(r)),
        (s, r) => s.or(r),
    }
}

/// A limit the request asks for: a positive integer, as a string (OpenAI
/// metadata values are strings) or a number.
fn requested(meta: &Map<String, Value>, key: &str) -> Result<Option<u32>, EngineError> {
    let Some(v) = meta.get(key) else {
        return Ok(None);
    };
    let n = match v {
        Value::String(s) => s.trim().parse::<u32>().ok(),
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    };
    match n {
        Some(n) if n > 0 => Ok(Some(n)),
        _ => Err(EngineError::invalid_code(
            format!("Invalid value for metadata '{key}': expected a positive integer."),
            Some(&format!("metadata.{key}")),
            "invalid_value",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(meta: Value) -> CreateResponseRequest {
        serde_json::from_value(json!({"model": "m", "metadata": meta})).unwrap()
    }

    #[test]
    fn the_request_lowers_but_never_raises() {
        let config = EngineConfig {
            max_agentic_turns: 10,
            max_tool_calls_per_turn: Some(4),
            ..EngineConfig::default()
        };
        let l = limits(
            &config,
            &req(
                json!({"windlass_max_turns": "3", "windlass_max_tool_calls_per_turn": "9",
                        "windlass_tool_error_threshold": "2"}),
            ),
            None,
        )
        .unwrap();
        assert_eq!(l.max_turns, 3);
        assert_eq!(l.per_turn, Some(4));
        assert_eq!(l.error_threshold, Some(2));
        let raised = limits(&config, &req(json!({"windlass_max_turns": "50"})), None).unwrap();
        assert_eq!(raised.max_turns, 10);
    }

    #[test]
    fn the_request_names_its_techniques_over_the_servers() {
        let config = EngineConfig {
            completion_check: true,
            ..EngineConfig::default()
        };
        let l = limits(&config, &req(json!({})), None).unwrap();
        assert!(l.techniques.completion_check && !l.techniques.repeat_guard);
        let l = limits(
            &config,
            &req(json!({"windlass_techniques": "-completion_check,repeat_guard"})),
            None,
        )
        .unwrap();
        assert!(!l.techniques.completion_check && l.techniques.repeat_guard);
        // A caller's (an API key's) set replaces the server's; the request
        // still changes it.
        let key = Techniques {
            stall_stop: true,
            ..Techniques::none()
        };
        let l = limits(&config, &req(json!({})), Some(key)).unwrap();
        assert_eq!(l.techniques, key);
        let l = limits(
            &config,
            &req(json!({"windlass_techniques": "repeat_guard"})),
            Some(key),
        )
        .unwrap();
        assert!(
            l.techniques.stall_stop && l.techniques.repeat_guard && !l.techniques.completion_check
        );
        for bad in [json!("plan"), json!(3)] {
            let err = limits(&config, &req(json!({"windlass_techniques": bad})), None).unwrap_err();
            assert!(
                matches!(&err, EngineError::InvalidRequest { param: Some(p), .. } if p == "metadata.windlass_techniques"),
                "{err:?}"
            );
        }
    }

    #[test]
    fn a_bad_limit_is_refused() {
        let config = EngineConfig::default();
        for bad in [json!("0"), json!("many"), json!(-1), json!(true)] {
            let err = limits(&config, &req(json!({"windlass_max_turns": bad})), None).unwrap_err();
            assert!(
                matches!(&err, EngineError::InvalidRequest { param: Some(p), .. } if p == "metadata.windlass_max_turns"),
                "{err:?}"
            );
        }
    }
}

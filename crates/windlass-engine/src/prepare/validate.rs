//! Checks on the request's scalar fields: refuse, by name, what Windlass
//! cannot honour, instead of dropping it.

use windlass_protocol::{ContextManagement, CreateResponseRequest};

use crate::error::EngineError;

const KNOWN_INCLUDES: [&str; 5] = [
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
    windlass_protocol::INCLUDE_FILE_SEARCH_RESULTS,
    windlass_protocol::INCLUDE_WEB_SEARCH_SOURCES,
    windlass_protocol::INCLUDE_CODE_INTERPRETER_OUTPUTS,
];
const SERVICE_TIERS: [&str; 5] = ["auto", "default", "flex", "priority", "scale"];

pub(super) fn validate_fields(req: &CreateResponseRequest) -> Result<(), EngineError> {
    if let Some(name) = req.extra.keys().next() {
        return Err(EngineError::invalid_code(
            format!("Unknown parameter: '{name}'."),
            Some(name),
            "unknown_parameter",
        ));
    }
    // A background response is fetched later, so it must be stored (as
    // OpenAI refuses it).
    if req.background == Some(true) && req.store == Some(false) {
        return Err(EngineError::invalid_code(
            "Background mode requires 'store' to be true.",
            Some("background"),
            "invalid_value",
        ));
    }
    // A surface with a prompt store resolves `prompt` before prepare
    // (the server's intake); here it would be dropped, so it is refused.
    if req.prompt.is_some() {
        return Err(unsupported(
            "prompt",
            "prompt is not available here: no prompt store is configured",
        ));
    }
    for (i, entry) in req.context_management.iter().flatten().enumerate() {
        if entry.kind != ContextManagement::COMPACTION {
            return Err(EngineError::invalid_code(
                format!(
                    "context_management[{i}].type '{}' is not supported; use 'compaction'",
                    entry.kind
                ),
                Some(&format!("context_management[{i}].type")),
                "invalid_value",
            ));
        }
        if entry.compact_threshold == Some(0) {
            return Err(EngineError::invalid_code(
                "compact_threshold must be at least 1",
                Some(&format!("context_management[{i}].compact_threshold")),
                "invalid_value",
            ));
        }
    }
    range(req.temperature, 0.0, 2.0, "temperature")?;
    range(req.top_p, 0.0, 1.0, "top_p")?;
    range(req.presence_penalty, -2.0, 2.0, "presence_penalty")?;
    stop_and_top_k(req)?;
    range(req.frequency_penalty, -2.0, 2.0, "frequency_penalty")?;
    if let Some(n) = req.top_logprobs {
        if n > 20 {
            return Err(EngineError::invalid(
                "top_logprobs must be between 0 and 20",
                Some("top_logprobs".to_owned()),
            ));
        }
    }
    if req.max_output_tokens == Some(0) {
        return Err(EngineError::invalid(
            "max_output_tokens must be at least 1",
            Some("max_output_tokens".to_owned()),
        ));
    }
    for inc in req.include.iter().flatten() {
        if !KNOWN_INCLUDES.contains(&inc.as_str()) {
            return Err(EngineError::invalid(
                format!("include value '{inc}' is not supported"),
                Some("include".to_owned()),
            ));
        }
    }
    if let Some(tier) = &req.service_tier {
        if !SERVICE_TIERS.contains(&tier.as_str()) {
            return Err(EngineError::invalid(
                format!("service_tier '{tier}' is not one of {SERVICE_TIERS:?}"),
                Some("service_tier".to_owned()),
            ));
        }
    }
    if let Some(meta) = &req.metadata {
        validate_metadata(meta)?;
    }
    if req.input.is_none() && req.previous_response_id.is_none() {
        return Err(EngineError::invalid_code(
            "Missing required parameter: 'input'.",
            Some("input"),
            "missing_required_parameter",
        ));
    }
    Ok(())
}

fn validate_metadata(meta: &serde_json::Map<String, serde_json::Value>) -> Result<(), EngineError> {
    let param = || Some("metadata".to_owned());
    if meta.len() > 16 {
        return Err(EngineError::invalid(
            "metadata may hold at most 16 keys",
            param(),
        ));
    }
    for (k, v) in meta {
        if k.chars().count() > 64 {
            return Err(EngineError::invalid(
                format!("metadata key '{k}' is longer than 64 characters"),
                param(),
            ));
        }
        match v.as_str() {
            Some(s) if s.chars().count() <= 512 => {}
            Some(_) => {
                return Err(EngineError::invalid(
                    format!("metadata value of '{k}' is longer than 512 characters"),
                    param(),
                ))
            }
            None => {
                return Err(EngineError::invalid(
                    format!("metadata value of '{k}' must be a string"),
                    param(),
                ))
            }
        }
    }
    Ok(())
}

fn range(v: Option<f64>, lo: f64, hi: f64, name: &str) -> Result<(), EngineError> {
    match v {
        Some(x) if !(lo..=hi).contains(&x) => Err(EngineError::invalid(
            format!("{name} must be between {lo} and {hi}, got {x}"),
            Some(name.to_owned()),
        )),
        _ => Ok(()),
    }
}

pub(super) fn unsupported(param: &str, message: &str) -> EngineError {
    EngineError::invalid_code(message, Some(param), "unsupported_parameter")
}

/// Windlass's `stop` and `top_k` extensions: at most [`MAX_STOP`] non-empty
/// sequences (an empty one would end every text at once), `top_k` >= 1.
fn stop_and_top_k(req: &CreateResponseRequest) -> Result<(), EngineError> {
    let stop = req.stop.as_deref().unwrap_or_default();
    if stop.len() > MAX_STOP {
        return Err(EngineError::invalid(
            format!("stop takes at most {MAX_STOP} sequences"),
            Some("stop".to_owned()),
        ));
    }
    if let Some(i) = stop.iter().position(String::is_empty) {
        return Err(EngineError::invalid(
            "a stop sequence must not be empty",
            Some(format!("stop[{i}]")),
        ));
    }
    if req.top_k == Some(0) {
        return Err(EngineError::invalid(
            "top_k must be at least 1",
            Some("top_k".to_owned()),
        ));
    }
    Ok(())
}

/// Stop sequences per request (Anthropic's own limit is higher; OpenAI's
/// chat completions takes 4, vLLM and llama.cpp any number).
const MAX_STOP: usize = 16;

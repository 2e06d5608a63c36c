//! `prompt` on create: the stored template it names (`id`, `version` or the
//! latest) filled in with its `variables`, in the caller's tenant, before
//! the engine sees the request. The template's instructions come first
//! (the request's own `instructions`, if any, follow after a blank line)
//! and its input items go before the request's `input`. The prompt is
//! echoed on the response as given.

use windlass_protocol::{expand_prompt, CreateResponseRequest, Input, PromptParam};

use crate::error::ApiError;
use crate::state::AppState;

/// Resolves `req.prompt` in place; the prompt to echo, if there was one.
pub(crate) async fn resolve(
    app: &AppState,
    tenant: &str,
    req: &mut CreateResponseRequest,
) -> Result<Option<PromptParam>, ApiError> {
    let Some(prompt) = req.prompt.take() else {
        return Ok(None);
    };
    let Some(store) = app.prompts.as_ref() else {
        return Err(
            ApiError::invalid("'prompt' is not available: this server keeps no prompts.")
                .param("prompt")
                .code("unsupported_parameter"),
        );
    };
    let version = store
        .prompt_version(tenant, &prompt.id, prompt.version.as_deref())
        .await?
        .ok_or_else(|| {
            let what = match &prompt.version {
                Some(v) => format!("{}' version '{v}", prompt.id),
                None => prompt.id.clone(),
            };
            ApiError::not_found("Prompt", &what).param("prompt.id")
        })?;
    let empty = serde_json::Map::new();
    let variables = prompt.variables.as_ref().unwrap_or(&empty);
    let expanded = expand_prompt(&version.template, variables).map_err(|e| {
        ApiError::invalid(format!("Invalid prompt variables: {e}."))
            .param(format!("prompt.variables.{}", e.variable()))
            .code("invalid_value")
    })?;
    req.instructions = match (expanded.instructions, req.instructions.take()) {
        (Some(t), Some(own)) => Some(format!("{t}\n\n{own}")),
        (t, own) => t.or(own),
    };
    let mut input = expanded.input;
    input.extend(req.input.take().map(Input::into_items).unwrap_or_default());
    req.input = Some(Input::Items(input));
    Ok(Some(prompt))
}

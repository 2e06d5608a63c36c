//! What a request continues from: a stored response's chain, a
//! conversation's items, or a context the surface kept itself.

use windlass_protocol::{CreateResponseRequest, Item};

use crate::engine::EngineInner;
use crate::error::EngineError;

/// The history of `req` in `tenant`: empty for a fresh request. `known` is
/// the context of `previous_response_id` when the surface kept it (used
/// instead of the store).
pub(super) async fn load(
    inner: &EngineInner,
    tenant: &str,
    req: &CreateResponseRequest,
    conversation: Option<&str>,
    known: Option<Vec<Item>>,
) -> Result<Vec<Item>, EngineError> {
    match (&req.previous_response_id, conversation, known) {
        (Some(_), Some(_), _) => Err(EngineError::invalid_code(
            "Mutually exclusive parameters: 'previous_response_id' and 'conversation' cannot be used together.",
            Some("conversation"),
            "mutually_exclusive_parameters",
        )),
        (None, Some(id), _) => conversation_history(inner, tenant, id).await,
        (Some(_), None, Some(context)) => Ok(context),
        (Some(prev), None, None) => inner
            .store
            .load_context(tenant, prev)
            .await?
            // A 400 like OpenAI's; the same for another tenant's id.
            .ok_or_else(|| EngineError::InvalidRequest {
                message: format!("Previous response with id '{prev}' not found."),
                param: Some("previous_response_id".to_owned()),
                code: Some("previous_response_not_found".to_owned()),
            }),
        (None, None, _) => Ok(Vec::new()),
    }
}

/// The items of conversation `id`: a 404 when unknown, a 400 when this
/// engine keeps no conversations.
async fn conversation_history(
    inner: &EngineInner,
    tenant: &str,
    id: &str,
) -> Result<Vec<Item>, EngineError> {
    let Some(store) = &inner.conversations else {
        return Err(EngineError::invalid_code(
            "Conversations are not enabled on this server.",
            Some("conversation"),
            "unsupported_parameter",
        ));
    };
    store
        .conversation_context(tenant, id)
        .await?
        .ok_or_else(|| EngineError::NotFound {
            message: format!("Conversation with id '{id}' not found."),
            param: Some("conversation".to_owned()),
            code: Some("conversation_not_found".to_owned()),
        })
}

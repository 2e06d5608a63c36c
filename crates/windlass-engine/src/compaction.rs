//! Compaction: a conversation replaced by a summary the upstream model writes.
//!
//! `Engine::compact` is one more entry point on the same loop: it runs the
//! conversation, plus [`COMPACTION_PROMPT`], as a tool-less, unstored
//! single-shot response and wraps the model's answer in a `compaction` item.
//! Given back as `input`, that item reaches the upstream as a user message
//! carrying the summary ([`summary_message`]), so any later request starts
//! from the summary instead of the history it replaces.
//!
//! `encrypted_content` is opaque to clients but not encrypted: it is
//! `wl1.` followed by the summary in unpadded base64url. Windlass keeps no
//! key, so a compaction item works on any replica and after restarts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use tokio_util::sync::CancellationToken;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    CompactRequest, CompactResource, Compaction, CreateResponseRequest, Input, Item, Message,
    MessageContent, Role, ToolChoice, ToolChoiceMode, Usage,
};

use crate::engine::Engine;
use crate::error::{EngineError, FailureKind, RunFailure};
use crate::ports::agent::sink::NoEvents;
use crate::run_context::RunContext;

/// The instructions the upstream model gets for a compaction pass.
pub const COMPACTION_PROMPT: &str = "You are compacting a conversation so it can continue later \
without its full history. Write a concise summary of the conversation so far that keeps every \
fact, decision, name, number, code word, open question, tool result and pending task needed to \
continue it. Write it as notes addressed to yourself, in the conversation's language. Answer \
with the summary only.";

/// The last user turn of a compaction pass, after the conversation.
pub(crate) const COMPACTION_REQUEST: &str = "Write the summary of the conversation above now.";

/// How a summary is introduced to the upstream model.
const SUMMARY_HEADER: &str = "Summary of the earlier conversation (it replaces that history):\n";

const SEAL: &str = "wl1.";

/// The `encrypted_content` for `summary`.
pub fn seal(summary: &str) -> String {
    format!("{SEAL}{}", URL_SAFE_NO_PAD.encode(summary))
}

/// The summary inside `encrypted_content`, when Windlass wrote it.
pub fn open(content: &str) -> Option<String> {
    let body = content.strip_prefix(SEAL)?;
    let bytes = URL_SAFE_NO_PAD.decode(body).ok()?;
    String::from_utf8(bytes).ok()
}

/// The message the upstream sees for a compaction item (`None` if unreadable;
/// input checks refuse those first).
pub(crate) fn summary_message(c: &Compaction) -> Option<Item> {
    let summary = open(&c.encrypted_content)?;
    Some(Item::Message(Message {
        id: None,
        role: Role::User,
        content: MessageContent::Text(format!("{SUMMARY_HEADER}{summary}")),
        status: None,
        phase: None,
    }))
}

/// Why a compaction did not produce a `CompactResource`.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    /// Refused before anything ran (4xx).
    #[error(transparent)]
    Refused(#[from] EngineError),
    /// The model pass failed.
    #[error("{}", .0.message)]
    Failed(RunFailure),
}

impl Engine {
    /// Compacts `req`'s conversation (its stored chain, read in `tenant`,
    /// then its input).
    pub async fn compact(
        &self,
        tenant: &str,
        req: CompactRequest,
        cancel: CancellationToken,
    ) -> Result<CompactResource, CompactError> {
        let pass = compaction_pass(req)?;
        let prepared = self.prepare(RunContext::for_tenant(tenant), pass).await?;
        // The conversation being replaced, without the closing request.
        let mut conversation = prepared.context();
        conversation.pop();
        let outcome = self.run(prepared, &mut NoEvents, cancel).await;
        if let Some(failure) = outcome.failure {
            return Err(CompactError::Failed(failure));
        }
        let summary = outcome.response.output_text();
        if summary.trim().is_empty() {
            return Err(CompactError::Failed(RunFailure::new(
                FailureKind::UpstreamProtocol,
                "the upstream model returned no summary",
            )));
        }
        Ok(CompactResource {
            id: new_id(prefix::RESPONSE),
            object: "response.compaction".to_owned(),
            output: compacted(conversation, &summary),
            created_at: crate::clock::now_secs(),
            usage: outcome.response.usage.unwrap_or_else(Usage::default),
        })
    }
}

/// The single-shot request that asks the model for the summary.
fn compaction_pass(req: CompactRequest) -> Result<CreateResponseRequest, EngineError> {
    if let Some(name) = req.extra.keys().next() {
        return Err(EngineError::invalid_code(
            format!("Unknown parameter: '{name}'."),
            Some(name),
            "unknown_parameter",
        ));
    }
    // The contract requires `model` here, even where a default exists.
    if req.model.as_deref().is_none_or(str::is_empty) {
        return Err(EngineError::invalid_code(
            "Missing required parameter: 'model'.",
            Some("model"),
            "missing_required_parameter",
        ));
    }
    let mut input = req.input.map(Input::into_items).unwrap_or_default();
    input.push(Item::user_text(COMPACTION_REQUEST));
    let instructions = match req.instructions {
        Some(own) => {
            format!("{COMPACTION_PROMPT}\n\nThe conversation's own instructions were:\n{own}")
        }
        None => COMPACTION_PROMPT.to_owned(),
    };
    Ok(CreateResponseRequest {
        model: req.model,
        input: Some(Input::Items(input)),
        previous_response_id: req.previous_response_id,
        instructions: Some(instructions),
        prompt_cache_key: req.prompt_cache_key,
        tool_choice: Some(ToolChoice::Mode(ToolChoiceMode::None)),
        store: Some(false),
        ..CreateResponseRequest::default()
    })
}

/// The user's messages, verbatim, then one compaction item standing for
/// everything else (earlier compaction items included).
fn compacted(conversation: Vec<Item>, summary: &str) -> Vec<Item> {
    let mut out: Vec<Item> = conversation
        .into_iter()
        .filter(|item| matches!(item, Item::Message(m) if m.role == Role::User))
        .collect();
    out.push(Item::Compaction(Compaction {
        id: Some(new_id(prefix::COMPACTION)),
        encrypted_content: seal(summary),
        created_by: None,
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_summary_opens_to_itself_and_foreign_content_does_not_open() {
        let text = "Launch on Tuesday; tell support first. Code word: slate — ünïcode";
        assert_eq!(open(&seal(text)).as_deref(), Some(text));
        assert_eq!(open("gAAAAABpM0Yj-foreign"), None);
        assert_eq!(open("wl1.*not base64*"), None);
    }

    #[test]
    fn the_pass_needs_a_model_and_refuses_unknown_fields() {
        let missing = compaction_pass(CompactRequest::default());
        assert!(
            matches!(missing, Err(EngineError::InvalidRequest { param: Some(p), .. }) if p == "model")
        );
        let mut req = CompactRequest {
            model: Some("m".into()),
            ..CompactRequest::default()
        };
        req.extra
            .insert("stream".into(), serde_json::Value::Bool(true));
        let unknown = compaction_pass(req);
        assert!(
            matches!(unknown, Err(EngineError::InvalidRequest { param: Some(p), .. }) if p == "stream")
        );
    }

    #[test]
    fn compacted_keeps_user_messages_and_ends_with_one_compaction() {
        let old = Item::Compaction(Compaction {
            id: Some("cmp_old".into()),
            encrypted_content: seal("older"),
            created_by: None,
        });
        let conversation = vec![
            Item::user_text("first"),
            Item::Message(Message {
                id: None,
                role: Role::Assistant,
                content: MessageContent::Text("reply".into()),
                status: None,
                phase: None,
            }),
            old,
            Item::user_text("second"),
        ];
        let out = compacted(conversation, "the summary");
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], Item::user_text("first"));
        assert_eq!(out[1], Item::user_text("second"));
        let Item::Compaction(c) = &out[2] else {
            panic!("last item is {:?}", out[2]);
        };
        assert_eq!(open(&c.encrypted_content).as_deref(), Some("the summary"));
        assert!(c.id.as_deref().is_some_and(|id| id.starts_with("cmp_")));
    }
}

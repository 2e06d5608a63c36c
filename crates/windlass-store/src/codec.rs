//! JSON encoding of stored values and error mapping shared by both stores.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use windlass_engine::StoreError;
use windlass_protocol::{Item, ResponseResource};

/// Encodes an item for storage.
pub(crate) fn encode_item(item: &Item) -> Result<String, StoreError> {
    serde_json::to_string(item).map_err(|e| StoreError::Backend(format!("cannot encode item: {e}")))
}

/// Decodes a stored item; unreadable JSON means the store is corrupt.
pub(crate) fn decode_item(body: &str) -> Result<Item, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("item: {e}")))
}

/// Encodes a resource without its output: output items are stored as items,
/// so keeping them in the resource too would store them twice.
pub(crate) fn encode_resource(resource: &ResponseResource) -> Result<String, StoreError> {
    serde_json::to_string(&WithoutOutput(resource))
        .map_err(|e| StoreError::Backend(format!("cannot encode response: {e}")))
}

/// A resource serialized as its derived `Serialize` would, with an empty
/// `output`: no clone and no intermediate `Value` tree (that round trip was
/// ~8 % of a stored request's CPU). The destructuring lists every field, so
/// a field added to the resource fails to compile here until it is added.
struct WithoutOutput<'a>(&'a ResponseResource);

impl Serialize for WithoutOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ResponseResource {
            id,
            object,
            created_at,
            completed_at,
            status,
            incomplete_details,
            model,
            previous_response_id,
            instructions,
            output: _,
            error,
            tools,
            tool_choice,
            truncation,
            parallel_tool_calls,
            text,
            top_p,
            presence_penalty,
            frequency_penalty,
            top_logprobs,
            temperature,
            reasoning,
            usage,
            max_output_tokens,
            max_tool_calls,
            store,
            background,
            service_tier,
            metadata,
            safety_identifier,
            prompt_cache_key,
            allowed_tools,
            user,
            conversation,
            prompt,
            stop_sequence,
        } = self.0;
        let mut m = s.serialize_struct("ResponseResource", 36)?;
        m.serialize_field("id", id)?;
        m.serialize_field("object", object)?;
        m.serialize_field("created_at", created_at)?;
        m.serialize_field("completed_at", completed_at)?;
        m.serialize_field("status", status)?;
        m.serialize_field("incomplete_details", incomplete_details)?;
        m.serialize_field("model", model)?;
        m.serialize_field("previous_response_id", previous_response_id)?;
        m.serialize_field("instructions", instructions)?;
        m.serialize_field("output", &[] as &[Item])?;
        m.serialize_field("error", error)?;
        m.serialize_field("tools", tools)?;
        m.serialize_field("tool_choice", tool_choice)?;
        m.serialize_field("truncation", truncation)?;
        m.serialize_field("parallel_tool_calls", parallel_tool_calls)?;
        m.serialize_field("text", text)?;
        m.serialize_field("top_p", top_p)?;
        m.serialize_field("presence_penalty", presence_penalty)?;
        m.serialize_field("frequency_penalty", frequency_penalty)?;
        m.serialize_field("top_logprobs", top_logprobs)?;
        m.serialize_field("temperature", temperature)?;
        m.serialize_field("reasoning", reasoning)?;
        m.serialize_field("usage", usage)?;
        m.serialize_field("max_output_tokens", max_output_tokens)?;
        m.serialize_field("max_tool_calls", max_tool_calls)?;
        m.serialize_field("store", store)?;
        m.serialize_field("background", background)?;
        m.serialize_field("service_tier", service_tier)?;
        m.serialize_field("metadata", metadata)?;
        m.serialize_field("safety_identifier", safety_identifier)?;
        m.serialize_field("prompt_cache_key", prompt_cache_key)?;
        if allowed_tools.is_some() {
            m.serialize_field("allowed_tools", allowed_tools)?;
        }
        if user.is_some() {
            m.serialize_field("user", user)?;
        }
        if conversation.is_some() {
            m.serialize_field("conversation", conversation)?;
        }
        if stop_sequence.is_some() {
            m.serialize_field("stop_sequence", stop_sequence)?;
        }
        if prompt.is_some() {
            m.serialize_field("prompt", prompt)?;
        }
        m.end()
    }
}

/// Decodes a stored resource and puts its output items back.
pub(crate) fn decode_resource(
    body: &str,
    output: Vec<Item>,
) -> Result<ResponseResource, StoreError> {
    let mut resource: ResponseResource =
        serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("response: {e}")))?;
    resource.output = output;
    Ok(resource)
}

/// Database failures are backend failures. Callers that must tell a specific
/// failure apart (a duplicate response id) inspect the error before this.
#[cfg(feature = "sqlite")]
pub(crate) fn backend(err: rusqlite::Error) -> StoreError {
    StoreError::Backend(err.to_string())
}

/// A UNIQUE or PRIMARY KEY constraint failed (rusqlite turns on extended
/// result codes, so the exact constraint kind is known).
#[cfg(feature = "sqlite")]
pub(crate) fn is_unique_violation(err: &rusqlite::Error) -> bool {
    use rusqlite::ffi;
    matches!(
        err,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE
                || e.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The stored form is exactly the derived serialization with `output`
    /// emptied, optional fields included or skipped alike.
    #[test]
    fn encoded_resource_is_the_derived_form_without_output() {
        let full: ResponseResource = serde_json::from_value(json!({
            "id": "resp_1", "object": "response", "created_at": 1, "completed_at": 2,
            "status": "completed", "incomplete_details": null, "model": "m",
            "previous_response_id": "resp_0", "instructions": "be brief",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "hi", "annotations": []}]}],
            "error": null, "tools": [], "tool_choice": "auto", "truncation": "disabled",
            "parallel_tool_calls": true, "text": {"format": {"type": "text"}}, "top_p": 1.0,
            "presence_penalty": 0.0, "frequency_penalty": 0.0, "top_logprobs": 0,
            "temperature": 1.0, "reasoning": null, "usage": null, "max_output_tokens": null,
            "max_tool_calls": null, "store": true, "background": false, "service_tier": "default",
            "metadata": {"k": "v"}, "safety_identifier": null, "prompt_cache_key": null,
            "allowed_tools": ["a"], "user": "u", "conversation": {"id": "conv_1"}
        }))
        .expect("resource");
        for resource in [
            full.clone(),
            ResponseResource {
                allowed_tools: None,
                user: None,
                conversation: None,
                ..full
            },
        ] {
            let mut expected = serde_json::to_value(&resource).expect("value");
            expected["output"] = json!([]);
            let encoded = encode_resource(&resource).expect("encode");
            let got: Value = serde_json::from_str(&encoded).expect("json");
            assert_eq!(got, expected);
            assert_eq!(
                decode_resource(&encoded, resource.output.clone()).expect("decode"),
                resource
            );
        }
    }
}

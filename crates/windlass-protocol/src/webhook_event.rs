//! The body of a background response's webhook, as OpenAI sends it: an
//! `event` naming what happened (`response.completed`, `.failed`,
//! `.cancelled`, `.incomplete`) and the response's id (the receiver fetches
//! the response itself).

use serde::{Deserialize, Serialize};

use crate::ids::new_id;
use crate::response::ResponseStatus;

/// A webhook's body: `{"id", "object": "event", "created_at", "type", "data"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's webhook event reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct WebhookEvent {
    /// `evt_...`; also the `webhook-id` header, the same on every retry so
    /// the receiver can drop duplicates.
    pub id: String,
    pub object: String,
    pub created_at: u64,
    #[serde(rename = "type")]
    pub kind: String,
    pub data: WebhookEventData,
}

/// A webhook's `data`: the id of the response it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's webhook event reference, named as it names them.
#[allow(missing_docs)]
pub struct WebhookEventData {
    pub id: String,
}

impl WebhookEvent {
    /// The event for a response that ended with `status`; `None` while it
    /// runs, and for `requires_action` (the client is waiting on it already).
    pub fn for_response(
        response_id: &str,
        status: ResponseStatus,
        created_at: u64,
    ) -> Option<WebhookEvent> {
        let kind = match status {
            ResponseStatus::Completed => "response.completed",
            ResponseStatus::Failed => "response.failed",
            ResponseStatus::Cancelled => "response.cancelled",
            ResponseStatus::Incomplete => "response.incomplete",
            _ => return None,
        };
        Some(WebhookEvent {
            id: new_id("evt"),
            object: "event".to_owned(),
            created_at,
            kind: kind.to_owned(),
            data: WebhookEventData {
                id: response_id.to_owned(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ended_responses_have_events() {
        let e = WebhookEvent::for_response("resp_1", ResponseStatus::Incomplete, 5).unwrap();
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "response.incomplete");
        assert_eq!(v["object"], "event");
        assert_eq!(v["data"]["id"], "resp_1");
        assert!(e.id.starts_with("evt_"));
        assert!(WebhookEvent::for_response("r", ResponseStatus::InProgress, 5).is_none());
        assert!(WebhookEvent::for_response("r", ResponseStatus::RequiresAction, 5).is_none());
    }
}

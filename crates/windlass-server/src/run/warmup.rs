//! WebSocket `generate: false` (Codex's warm-up): the request is checked
//! and prepared (its chain loaded, its tools resolved) but the model is not
//! called. The client gets `response.created` and `response.completed`
//! with no output, and the connection keeps the request's input and
//! `previous_response_id` under the response's id: a `response.create`
//! that continues that id runs with them, as if the two were one request.
//! Nothing is stored for the warm-up itself.

use windlass_engine::{EventSink, PreparedRun};
use windlass_protocol::{
    CreateResponseRequest, EventData, Input, Item, ResponseStatus, StreamEvent,
};

/// A warm-up the connection keeps for the next `response.create`.
#[derive(Debug, Clone)]
pub(crate) struct Warm {
    pub id: String,
    previous: Option<String>,
    input: Vec<Item>,
}

impl Warm {
    /// What `req` (already prepared as `prepared`) leaves for the next one.
    pub fn of(prepared: &PreparedRun, previous: Option<String>, input: Option<Input>) -> Warm {
        Warm {
            id: prepared.id().to_owned(),
            previous,
            input: input.map(Input::into_items).unwrap_or_default(),
        }
    }

    /// `req` continues this warm-up: it continues what the warm-up
    /// continued, with the warm-up's input before its own.
    pub fn apply(self, req: &mut CreateResponseRequest) {
        req.previous_response_id = self.previous;
        let mut input = self.input;
        input.extend(req.input.take().map(Input::into_items).unwrap_or_default());
        req.input = Some(Input::Items(input));
    }
}

/// Announces the warm-up response: created, then completed with no output.
/// `Err` when the client is gone.
pub(crate) async fn announce(prepared: &PreparedRun, sink: &mut dyn EventSink) -> Result<(), ()> {
    let mut response = prepared.response().clone();
    response.status = ResponseStatus::InProgress;
    let created = EventData::Created {
        response: Box::new(response.clone()),
    };
    response.status = ResponseStatus::Completed;
    response.completed_at = Some(response.created_at);
    let completed = EventData::Completed {
        response: Box::new(response),
    };
    for (n, data) in [created, completed].into_iter().enumerate() {
        let event = StreamEvent {
            data,
            sequence_number: n as u64,
        };
        sink.send(event).await.map_err(|_| ())?;
    }
    Ok(())
}

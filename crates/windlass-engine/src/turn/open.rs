//! The output items a turn holds open while the upstream streams (a
//! reasoning item, a message and its content part), and how each opens and
//! closes with its events.

use std::collections::BTreeMap;

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ContentPart, EventData, Item, ItemStatus, Message, MessageContent, Reasoning, TextPart,
};

use super::summary;
use crate::emitter::Emitter;

/// Which content part of the open message is being written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    Text,
    Refusal,
}

#[derive(Default)]
pub(crate) struct Open {
    pub reasoning: Option<usize>,
    /// The open summary part of the open reasoning item (the upstream's
    /// `summary_index`, and its position in the item's `summary`).
    pub summary: Option<(u32, usize)>,
    pub message: Option<(usize, Option<(usize, PartKind)>)>,
    /// Upstream tool-call index -> output index.
    pub calls: BTreeMap<u32, usize>,
}
/// The open reasoning item, opened (closing an open message) when none is;
/// its text part opens with the first text ([`open_reasoning_text`]).
pub(crate) async fn open_reasoning(out: &mut Emitter<'_>, open: &mut Open) -> usize {
    if let Some(i) = open.reasoning {
        return i;
    }
    if open.message.is_some() {
        close_message(out, open, ItemStatus::Completed).await;
    }
    let id = new_id(prefix::REASONING);
    let item = Item::Reasoning(Reasoning {
        id: Some(id),
        summary: Vec::new(),
        content: Some(Vec::new()),
        encrypted_content: None,
        status: Some(ItemStatus::InProgress),
    });
    let i = out.add_item(item).await;
    open.reasoning = Some(i);
    i
}

/// Opens the reasoning item's text part unless it is open already.
pub(super) async fn open_reasoning_text(out: &mut Emitter<'_>, idx: usize) {
    if let Item::Reasoning(r) = out.item_mut(idx) {
        let content = r.content.get_or_insert_with(Vec::new);
        if !content.is_empty() {
            return;
        }
        content.push(reasoning_part(String::new()));
    }
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(EventData::ContentPartAdded {
            item_id,
            output_index: idx,
            content_index: 0,
            part: reasoning_part(String::new()),
        })
        .await;
    }
}
pub(crate) async fn close_reasoning(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    let Some(idx) = open.reasoning else {
        return;
    };
    summary::close_summary(out, open, idx).await;
    open.reasoning = None;
    let mut text = None;
    if let Item::Reasoning(r) = out.item_mut(idx) {
        r.status = Some(status);
        // A summary-only item (as OpenAI's models give) has no content.
        if r.content.as_ref().is_some_and(Vec::is_empty) {
            r.content = None;
        }
        text = r
            .content
            .as_ref()
            .map(|c| c.iter().filter_map(ContentPart::text).collect::<String>());
    }
    if let (true, Some(text)) = (out.on(), text) {
        let item_id = item_id(out, idx);
        out.emit(EventData::ReasoningDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index: 0,
            text: text.clone(),
        })
        .await;
        out.emit(EventData::ContentPartDone {
            item_id,
            output_index: idx,
            content_index: 0,
            part: reasoning_part(text),
        })
        .await;
    }
    out.item_done(idx).await;
}

pub(crate) async fn close_message(out: &mut Emitter<'_>, open: &mut Open, status: ItemStatus) {
    let Some((idx, part)) = open.message.take() else {
        return;
    };
    if let Some((ci, kind)) = part {
        close_part(out, idx, ci, kind).await;
    }
    if let Item::Message(m) = out.item_mut(idx) {
        m.status = Some(status);
    }
    out.item_done(idx).await;
}

pub(super) async fn close_part(
    out: &mut Emitter<'_>,
    idx: usize,
    content_index: usize,
    kind: PartKind,
) {
    if !out.on() {
        return;
    }
    let part = match out.item_mut(idx) {
        Item::Message(Message {
            content: MessageContent::Parts(parts),
            ..
        }) => parts.get(content_index).cloned(),
        _ => None,
    };
    let Some(part) = part else { return };
    let item_id = item_id(out, idx);
    let done = match (&part, kind) {
        (ContentPart::OutputText(t), PartKind::Text) => EventData::OutputTextDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index,
            text: t.text.clone(),
            logprobs: t.logprobs.clone().unwrap_or_default(),
        },
        (ContentPart::Refusal(r), _) => EventData::RefusalDone {
            item_id: item_id.clone(),
            output_index: idx,
            content_index,
            refusal: r.refusal.clone(),
        },
        _ => return,
    };
    out.emit(done).await;
    out.emit(EventData::ContentPartDone {
        item_id,
        output_index: idx,
        content_index,
        part,
    })
    .await;
}

pub(super) fn reasoning_part(text: String) -> ContentPart {
    ContentPart::ReasoningText(TextPart { text })
}

pub(crate) fn item_id(out: &Emitter<'_>, idx: usize) -> String {
    out.response.output[idx].id().unwrap_or_default().to_owned()
}

//! Reasoning summaries: the upstream's `summary_index` parts become the
//! reasoning item's `summary` (`summary_text` parts), each opened, streamed
//! and closed with OpenAI's `reasoning_summary_*` events. The caller opens
//! the reasoning item and keeps which summary part is open (`OpenPart`);
//! nothing here reaches back into `turn/mod.rs`.

use windlass_protocol::{ContentPart, EventData, Item, TextPart};

use crate::emitter::Emitter;

/// The open summary part of the open reasoning item: the upstream's
/// `summary_index`, and its position in the item's `summary`.
pub(crate) type OpenPart = Option<(u32, usize)>;

/// A delta of the summary part `summary_index` of the reasoning item `idx`.
pub(super) async fn summary_delta(
    out: &mut Emitter<'_>,
    open: &mut OpenPart,
    idx: usize,
    summary_index: u32,
    delta: String,
) {
    let part = match *open {
        Some((upstream, part)) if upstream == summary_index => part,
        _ => {
            close_summary(out, open, idx).await;
            let part = open_part(out, idx).await;
            *open = Some((summary_index, part));
            part
        }
    };
    if let Some(ContentPart::SummaryText(t)) = summary_mut(out, idx, part) {
        t.text.push_str(&delta);
    }
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(EventData::ReasoningSummaryTextDelta {
            item_id,
            output_index: idx,
            summary_index: part,
            delta,
        })
        .await;
    }
}

/// Closes the open summary part of the reasoning item at `idx`, if any.
pub(super) async fn close_summary(out: &mut Emitter<'_>, open: &mut OpenPart, idx: usize) {
    let Some((_, part)) = open.take() else {
        return;
    };
    if !out.on() {
        return;
    }
    let text = match summary_mut(out, idx, part) {
        Some(ContentPart::SummaryText(t)) => t.text.clone(),
        _ => return,
    };
    let item_id = item_id(out, idx);
    out.emit(EventData::ReasoningSummaryTextDone {
        item_id: item_id.clone(),
        output_index: idx,
        summary_index: part,
        text: text.clone(),
    })
    .await;
    out.emit(EventData::ReasoningSummaryPartDone {
        item_id,
        output_index: idx,
        summary_index: part,
        part: summary_part(text),
    })
    .await;
}

/// Appends an empty summary part and announces it; returns its position.
async fn open_part(out: &mut Emitter<'_>, idx: usize) -> usize {
    let mut part = 0;
    if let Item::Reasoning(r) = out.item_mut(idx) {
        r.summary.push(summary_part(String::new()));
        part = r.summary.len() - 1;
    }
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(EventData::ReasoningSummaryPartAdded {
            item_id,
            output_index: idx,
            summary_index: part,
            part: summary_part(String::new()),
        })
        .await;
    }
    part
}

fn summary_mut<'a>(
    out: &'a mut Emitter<'_>,
    idx: usize,
    part: usize,
) -> Option<&'a mut ContentPart> {
    match out.item_mut(idx) {
        Item::Reasoning(r) => r.summary.get_mut(part),
        _ => None,
    }
}

fn item_id(out: &Emitter<'_>, idx: usize) -> String {
    out.response.output[idx].id().unwrap_or_default().to_owned()
}

fn summary_part(text: String) -> ContentPart {
    ContentPart::SummaryText(TextPart { text })
}

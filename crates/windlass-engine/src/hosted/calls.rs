//! A hosted call's item through the loop: opened `in_progress` while the
//! model streams the call, given its arguments when the call closes, put in
//! its working stage (`searching`, `interpreting`) when it runs, and
//! replaced by the executor's complete item when it ends.

use windlass_protocol::hosted_replay::{self, HostedKind, HostedStage};
use windlass_protocol::ids::new_id;
use windlass_protocol::{EventData, Item};

use crate::emitter::Emitter;
use crate::ports::agent::tools::{HostedProgress, ToolResult};

/// The item a model call of a hosted tool opens as.
pub(crate) fn open_item(kind: HostedKind) -> Item {
    kind.open_item(new_id(kind.id_prefix()))
}

/// Announces a just-opened hosted item as in progress.
pub(crate) async fn opened(out: &mut Emitter<'_>, idx: usize) {
    stage(out, idx, HostedStage::InProgress).await;
}

/// A piece of a code interpreter's code, as the model writes it.
pub(crate) async fn code_delta(out: &mut Emitter<'_>, idx: usize, delta: String) {
    if delta.is_empty() || !out.on() {
        return;
    }
    let item_id = item_id(out, idx);
    out.emit(EventData::CodeInterpreterCallCodeDelta {
        item_id,
        output_index: idx,
        delta,
    })
    .await;
}

/// The model finished the call: its arguments go into the item (the query,
/// the page, the code); the item stays open until the call has run. A code
/// interpreter's code, `streamed` so far as deltas, gets its last delta
/// (what the deltas missed, if any) and its `done`.
pub(crate) async fn arguments_done(
    out: &mut Emitter<'_>,
    idx: usize,
    arguments: &str,
    streamed: &str,
) {
    let item = out.item_mut(idx);
    hosted_replay::apply_arguments(item, arguments);
    if let Item::CodeInterpreterCall(c) = item {
        let code = c.code.clone().unwrap_or_default();
        let item_id = c.id.clone();
        // The deltas are a prefix of the code unless the arguments were
        // not what they looked like while streaming; then no more deltas.
        let rest = code.strip_prefix(streamed).unwrap_or_default().to_owned();
        code_delta(out, idx, rest).await;
        out.emit(EventData::CodeInterpreterCallCodeDone {
            item_id,
            output_index: idx,
            code,
        })
        .await;
    }
}

/// The call starts running.
pub(crate) async fn start(out: &mut Emitter<'_>, idx: usize) {
    hosted_replay::mark_working(out.item_mut(idx));
    stage(out, idx, HostedStage::Working).await;
}

/// An executor's progress on the running call at `idx`.
pub(crate) async fn progress(out: &mut Emitter<'_>, idx: usize, p: HostedProgress) {
    let item_id = item_id(out, idx);
    let data = match p {
        HostedProgress::CodeDelta(delta) => EventData::CodeInterpreterCallCodeDelta {
            item_id,
            output_index: idx,
            delta,
        },
        HostedProgress::CodeDone(code) => {
            if let Item::CodeInterpreterCall(c) = out.item_mut(idx) {
                c.code = Some(code.clone());
            }
            EventData::CodeInterpreterCallCodeDone {
                item_id,
                output_index: idx,
                code,
            }
        }
    };
    out.emit(data).await;
}

/// The call ended: its item becomes the executor's complete item (keeping
/// the id the client already has), or, when there is none (refused, timed
/// out, an executor error), the open item marked failed with the text the
/// model is told.
pub(crate) async fn finish(out: &mut Emitter<'_>, idx: usize, result: ToolResult) {
    let open = out.item_mut(idx);
    let id = open.id().unwrap_or_default().to_owned();
    let finished = match result.item {
        Some(item) if HostedKind::of_item(&item) == HostedKind::of_item(open) => {
            let mut item = *item;
            set_id(&mut item, id);
            if result.is_error && hosted_replay::succeeded(&item) {
                // The policy turned the result into an error after the run.
                hosted_replay::fail(&mut item, result.output.joined_text());
            }
            item
        }
        _ => {
            let mut item = open.clone();
            let text = match result.is_error {
                true => result.output.joined_text(),
                false => "Error: the tool gave no result".to_owned(),
            };
            hosted_replay::fail(&mut item, strip_error(&text));
            item
        }
    };
    *out.item_mut(idx) = finished;
    stage(out, idx, HostedStage::Completed).await;
    out.item_done(idx).await;
}

/// Closes a hosted item whose call never ran (the response paused for the
/// client or stopped first): failed, with what the model is told on replay.
pub(crate) fn close_unrun(item: &mut Item, paused: bool) {
    if !hosted_replay::is_open(item) {
        return;
    }
    let reason = if paused {
        "not run: the response paused for the client's tool calls first; call it again if it is still needed"
    } else {
        "not run: the response ended before the call ran"
    };
    hosted_replay::fail(item, reason.to_owned());
}

/// The loop's error texts start with `Error: `; the item's `error` holds
/// the reason alone (the rendering adds the prefix back).
fn strip_error(text: &str) -> String {
    text.strip_prefix("Error: ").unwrap_or(text).to_owned()
}

fn set_id(item: &mut Item, id: String) {
    match item {
        Item::FileSearchCall(c) => c.id = id,
        Item::WebSearchCall(c) => c.id = id,
        Item::CodeInterpreterCall(c) => c.id = id,
        _ => {}
    }
}

async fn stage(out: &mut Emitter<'_>, idx: usize, stage: HostedStage) {
    let Some(kind) = HostedKind::of_item(&out.response.output[idx]) else {
        return;
    };
    if out.on() {
        let item_id = item_id(out, idx);
        out.emit(kind.event(stage, item_id, idx)).await;
    }
}

fn item_id(out: &Emitter<'_>, idx: usize) -> String {
    out.response.output[idx].id().unwrap_or_default().to_owned()
}

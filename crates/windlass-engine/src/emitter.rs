//! The response under construction and the one place events are numbered.
//!
//! `output_index` is always the item's position in `response.output`, and
//! `sequence_number` increases by one per event, across every turn.

use tokio_util::sync::CancellationToken;
use windlass_protocol::{EventData, Item, ResponseResource, StreamEvent};

use crate::outcome::RunStats;
use crate::ports::agent::events::RunEvent;
use crate::ports::agent::sink::EventSink;
use crate::trace::TraceRecorder;

pub(crate) struct Emitter<'s> {
    pub response: ResponseResource,
    sink: &'s mut dyn EventSink,
    events: bool,
    seq: u64,
    cancel: CancellationToken,
    client_gone: bool,
    /// Items announced but not yet done, in output order.
    open: Vec<usize>,
    run_events: bool,
    /// Events held back, unnumbered, while a turn's answer may still be
    /// withdrawn (the completion check's draft); see [`Emitter::hold`].
    held: Option<Vec<EventData>>,
    /// The run's counts and trace, kept from its run events.
    pub stats: RunStats,
    pub trace: TraceRecorder,
    /// The request's `include`: events show hosted items cut to it.
    include: Vec<String>,
}

impl<'s> Emitter<'s> {
    pub(crate) fn new(
        response: ResponseResource,
        sink: &'s mut dyn EventSink,
        cancel: CancellationToken,
    ) -> Self {
        let events = sink.wants_events();
        let run_events = sink.wants_run_events();
        let trace = TraceRecorder::new(&response.id);
        Emitter {
            run_events,
            stats: RunStats::default(),
            trace,
            response,
            sink,
            events,
            seq: 0,
            cancel,
            client_gone: false,
            open: Vec::new(),
            held: None,
            include: Vec::new(),
        }
    }

    /// Events show hosted items as a client that sent `include` sees them.
    pub(crate) fn with_include(mut self, include: Vec<String>) -> Self {
        self.include = include;
        self
    }

    /// Whether events are wanted; callers skip building them otherwise.
    pub(crate) fn on(&self) -> bool {
        self.events && !self.client_gone
    }

    /// Sends one event. A closed receiver cancels the response: nobody is
    /// listening, so the upstream call and running tools stop.
    pub(crate) async fn emit(&mut self, mut data: EventData) {
        if !self.on() {
            return;
        }
        if let Some(held) = &mut self.held {
            held.push(data);
            return;
        }
        windlass_protocol::include::present_event(&mut data, &self.include);
        let event = StreamEvent {
            data,
            sequence_number: self.seq,
        };
        self.seq += 1;
        if self.sink.send(event).await.is_err() {
            self.client_gone = true;
            self.cancel.cancel();
        }
    }

    /// Records a run event (counts, trace) and hands it to the sink if it
    /// wants run events.
    pub(crate) async fn observe(&mut self, event: RunEvent) {
        match &event {
            RunEvent::TurnFinished(_) => self.stats.turns += 1,
            RunEvent::CallDecided(c) if c.turn.is_some() => {
                self.stats.tool_calls += 1;
                if !self.stats.tools_used.contains(&c.call.name) {
                    self.stats.tools_used.insert(c.call.name.clone());
                }
            }
            _ => {}
        }
        self.trace.record(&event);
        if self.run_events && !self.client_gone {
            self.sink.run_event(event).await;
        }
    }

    /// Lifecycle event carrying a snapshot of the response.
    pub(crate) async fn emit_snapshot(&mut self, make: fn(Box<ResponseResource>) -> EventData) {
        if self.on() {
            let snapshot = Box::new(self.response.clone());
            self.emit(make(snapshot)).await;
        }
    }

    /// Appends an item to the output and announces it; returns its index.
    pub(crate) async fn add_item(&mut self, item: Item) -> usize {
        let output_index = self.response.output.len();
        self.open.push(output_index);
        if self.on() {
            let announced = item.clone();
            self.response.output.push(item);
            self.emit(EventData::OutputItemAdded {
                output_index,
                item: announced,
            })
            .await;
        } else {
            self.response.output.push(item);
        }
        output_index
    }

    /// Appends an item to the output without announcing it yet (a call
    /// whose final form is only known once its arguments are complete);
    /// `announce_done` announces it, final.
    pub(crate) fn reserve_item(&mut self, item: Item) -> usize {
        let output_index = self.response.output.len();
        self.open.push(output_index);
        self.response.output.push(item);
        output_index
    }

    /// Announces a reserved item in its final form: `added` then `done`.
    pub(crate) async fn announce_done(&mut self, output_index: usize) {
        if self.on() {
            let item = self.response.output[output_index].clone();
            self.emit(EventData::OutputItemAdded { output_index, item })
                .await;
        }
        self.item_done(output_index).await;
    }

    /// Announces that the item at `output_index` is final.
    pub(crate) async fn item_done(&mut self, output_index: usize) {
        self.open.retain(|&i| i != output_index);
        if self.on() {
            let item = self.response.output[output_index].clone();
            self.emit(EventData::OutputItemDone { output_index, item })
                .await;
        }
    }

    /// Adds an already-final item: `added` then `done`.
    pub(crate) async fn add_done_item(&mut self, item: Item) -> usize {
        let idx = self.add_item(item).await;
        self.item_done(idx).await;
        idx
    }

    /// Whether the item was announced and is not done yet.
    pub(crate) fn is_open(&self, output_index: usize) -> bool {
        self.open.contains(&output_index)
    }

    /// Items still open, in output order.
    pub(crate) fn open_items(&self) -> Vec<usize> {
        self.open.clone()
    }

    /// From now on events are kept instead of sent (numbered only when
    /// released), so items can still be taken out of the output unseen.
    pub(crate) fn hold(&mut self) {
        self.held.get_or_insert_with(Vec::new);
    }

    /// Stops holding and hands back what was held.
    pub(crate) fn take_held(&mut self) -> Vec<EventData> {
        self.held.take().unwrap_or_default()
    }

    /// Stops holding and sends what was held, in order.
    pub(crate) async fn release(&mut self) {
        let held = self.take_held();
        self.send_all(held).await;
    }

    /// Sends events taken earlier (their items are back in place).
    pub(crate) async fn send_all(&mut self, events: Vec<EventData>) {
        for data in events {
            self.emit(data).await;
        }
    }

    /// Takes the items from `at` on out of the output (they were never
    /// shown: their events are held).
    pub(crate) fn take_from(&mut self, at: usize) -> Vec<Item> {
        self.open.retain(|&i| i < at);
        let at = at.min(self.response.output.len());
        self.response.output.split_off(at)
    }

    /// Puts items taken by [`Emitter::take_from`] back at the end.
    pub(crate) fn put_back(&mut self, items: Vec<Item>) {
        self.response.output.extend(items);
    }

    pub(crate) fn item_mut(&mut self, output_index: usize) -> &mut Item {
        &mut self.response.output[output_index]
    }
}

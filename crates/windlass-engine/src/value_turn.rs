//! The value check's steps in the driver (`value_check`; the counting is
//! `crate::values`). Before each model turn: whether a text-only answer
//! would leave a number of the request unused (the turn's events are then
//! held, as for the completion check). After such an answer: the draft
//! leaves the output (the client never sees it), the upstream gets it and a
//! nudge naming the unused numbers, and the next turn must call a tool.

use windlass_protocol::Item;

use super::Driver;
use crate::check::{answer_text, done_calls, request_text};
use crate::ports::agent::events::{CheckOutcome, CheckReport, RunEvent};
use crate::state::Phase;
use crate::upstream::TurnChoice;
use crate::values::{covered, nudge_prompt, takes_numbers, unused, Mention};

impl Driver<'_, '_> {
    /// Before a model turn: what the decision on its answer reads. (A text-
    /// only turn adds no call, so the count now is the count after it.)
    pub(super) fn arm_value_check(&mut self) {
        self.state.answer_forced = self.choice == TurnChoice::Answer;
        // The completion check's own turn is the check's to settle.
        self.state.unused_values = self.check.is_none() && !self.unused_values().is_empty();
    }

    /// The numbers of the request that no call of the run's input and
    /// output touched; none when the technique is off, no call succeeded
    /// yet or no tool takes a number.
    fn unused_values(&self) -> Vec<Mention> {
        if !self.run.limits.techniques.value_check || self.state.succeeded_calls == 0 {
            return Vec::new();
        }
        let schemas = self.run.tools.definitions().iter().map(|d| &d.parameters);
        if !takes_numbers(schemas) {
            return Vec::new();
        }
        let Some(request) = request_text(&self.run.input) else {
            return Vec::new();
        };
        let mut calls = done_calls(&self.run.input);
        calls.extend(done_calls(&self.out.response.output));
        let used = covered(&calls);
        unused(&request, &used)
    }

    /// The nudge: the draft (the last turn's items) and the nudge after it
    /// go to the upstream and the trace only.
    pub(super) async fn nudge_values(&mut self) {
        let at = self.turn_at;
        let mut exchange = self.out.take_from(at);
        self.out.take_held();
        let last_result = done_calls(&self.out.response.output)
            .into_iter()
            .rev()
            .find_map(|c| c.output);
        let prompt = nudge_prompt(&self.unused_values(), last_result.as_deref());
        let report = CheckReport {
            turn: self.state.turns.saturating_sub(1),
            draft: answer_text(&exchange),
            prompt: prompt.clone(),
            answer: String::new(),
            outcome: CheckOutcome::ValueNudge,
        };
        exchange.push(Item::user_text(prompt));
        self.hidden.push((at, exchange));
        self.choice = TurnChoice::Required;
        self.state.value_nudges += 1;
        self.state.unused_values = false;
        // Like after a round of tools: the model is called again.
        self.state.phase = Phase::AfterTools;
        self.out.observe(RunEvent::CheckFinished(report)).await;
    }
}

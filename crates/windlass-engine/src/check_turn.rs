//! The completion check's steps in the driver: one final answer for the
//! client, the check's exchange for the upstream and the trace only.
//!
//! While the check may still follow a turn (it is armed and the response
//! used tools), the turn's events are held. A turn that calls tools has
//! them sent at its end; a text-only turn is a draft: it leaves the output,
//! its events are kept, and the check's prompt (a user message) goes to the
//! upstream after it. The check turn is held too: if it calls tools they
//! are sent and the draft is dropped (the loop goes on and a later answer
//! is final); if it only answers, its text goes to the trace and the draft
//! comes back with its events, unchanged: the client sees one answer.

use windlass_protocol::{EventData, Item};

use super::Driver;
use crate::check::REQUIRED_PROMPT;
use crate::check::{answer_text, check_prompt, request_text, shows_missing_step};
use crate::ports::agent::events::{CheckOutcome, CheckReport, RunEvent};
use crate::state::{Phase, Verification};

/// A draft answer out of the output while the check runs.
pub(super) struct Draft {
    /// Its place in the output.
    at: usize,
    items: Vec<Item>,
    /// Its events, not sent yet.
    events: Vec<EventData>,
    /// Its text and the prompt it was met with, for the trace.
    text: String,
    prompt: String,
    /// Re-prompts sent for it.
    reprompts: u32,
}

impl Driver<'_, '_> {
    /// Whether this turn's events wait for its end: a check may follow it
    /// (armed, tools used), it is the check's turn, or a value nudge may
    /// follow it (`value_check`, a turn left after it).
    pub(super) fn holds_turn(&self) -> bool {
        self.check.is_some()
            || (self.state.verification == Verification::Armed && self.state.model_calls > 0)
            || (self.state.value_nudge_armed() && self.state.turns + 1 < self.state.max_turns)
    }

    /// The check: the draft (the last turn's items) leaves the output; the
    /// upstream sees it and the prompt after it.
    pub(super) fn verify(&mut self) {
        let at = self.turn_at;
        let items = self.out.take_from(at);
        let events = self.out.take_held();
        let restate = self.run.limits.techniques.restate_check;
        let request = request_text(&self.run.input);
        let prompt = check_prompt(restate, request.as_deref(), &self.out.response.output);
        let mut exchange = items.clone();
        exchange.push(prompt.clone());
        self.hidden.push((at, exchange));
        self.check = Some(Draft {
            at,
            text: answer_text(&items),
            prompt: answer_text(std::slice::from_ref(&prompt)),
            items,
            events,
            reprompts: 0,
        });
        self.state.verification = Verification::Sent;
        // Like after a round of tools: the model is called again.
        self.state.phase = Phase::AfterTools;
    }

    /// After the check's turn: its calls go out, or the draft comes back.
    pub(super) async fn check_answered(&mut self, turn: u32, text_only: bool) {
        let Some(draft) = self.check.take() else {
            return;
        };
        let answer =
            answer_text(&self.out.response.output[draft.at.min(self.out.response.output.len())..]);
        let mut report = CheckReport {
            turn,
            draft: draft.text.clone(),
            prompt: draft.prompt.clone(),
            answer: answer.clone(),
            outcome: CheckOutcome::Continued,
        };
        if !text_only {
            self.out.release().await;
        } else if self.reprompt_due(&draft, &answer) {
            let mut exchange = self.out.take_from(draft.at);
            self.out.take_held();
            exchange.push(Item::user_text(REQUIRED_PROMPT));
            self.hidden.push((draft.at, exchange));
            self.choice = crate::upstream::TurnChoice::Required;
            self.state.missing_step = true;
            report.outcome = CheckOutcome::Reprompted;
            self.check = Some(Draft {
                reprompts: draft.reprompts + 1,
                prompt: REQUIRED_PROMPT.to_owned(),
                ..draft
            });
        } else {
            self.out.take_from(draft.at);
            self.out.take_held();
            self.restore(draft).await;
            report.outcome = CheckOutcome::Confirmed;
        }
        self.out.observe(RunEvent::CheckFinished(report)).await;
    }

    /// `require_after_check`: once, while turns remain, when the answer
    /// names a step still to do.
    fn reprompt_due(&self, draft: &Draft, answer: &str) -> bool {
        self.run.limits.techniques.require_after_check
            && draft.reprompts == 0
            && self.state.turns < self.state.max_turns
            && shows_missing_step(answer)
    }

    async fn restore(&mut self, draft: Draft) {
        self.out.put_back(draft.items);
        self.out.send_all(draft.events).await;
    }

    /// When the loop ends with a check unresolved (its turn failed, was
    /// cancelled or stopped), the draft is the answer; held events go out.
    pub(super) async fn settle_check(&mut self) {
        if let Some(draft) = self.check.take() {
            self.out.take_from(draft.at);
            self.out.take_held();
            self.restore(draft).await;
        }
        self.out.release().await;
    }
}

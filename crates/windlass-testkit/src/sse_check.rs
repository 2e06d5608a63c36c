//! A captured SSE response and a strict check of the Responses stream
//! grammar ([`SseCapture::assert_well_formed`]).

use std::collections::HashMap;

use serde_json::Value;

/// Every event of one streamed response, in order.
#[derive(Debug, Clone)]
pub struct SseCapture {
    pub status: u16,
    pub content_type: String,
    /// `(event name, data)` per event; `[DONE]` is not an event.
    pub events: Vec<(String, Value)>,
    /// Whether `data: [DONE]` ended the stream.
    pub done: bool,
    pub raw: String,
}

impl SseCapture {
    pub fn parse(status: u16, content_type: String, raw: String) -> SseCapture {
        let mut events = Vec::new();
        let mut done = false;
        for block in raw.split("\n\n") {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            if data == "[DONE]" {
                done = true;
            } else if !data.is_empty() {
                let value: Value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("event data is not JSON ({e}): {data}"));
                let name = name.unwrap_or_default();
                events.push((name, value));
            }
        }
        SseCapture {
            status,
            content_type,
            events,
            done,
            raw,
        }
    }

    pub fn types(&self) -> Vec<&str> {
        self.events.iter().map(|(n, _)| n.as_str()).collect()
    }

    pub fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|(n, _)| n == t)
            .map(|(_, v)| v)
            .collect()
    }

    /// The response object carried by the terminal event.
    pub fn final_response(&self) -> &Value {
        &self.events.last().expect("no events").1["response"]
    }

    /// Checks the stream grammar and panics with
    /// a precise message on the first violation:
    /// - `event:` equals the data's `type`; `sequence_number` is 0, 1, 2, ...;
    /// - `response.created` then `response.in_progress` first, exactly once;
    /// - exactly one terminal event, last, then `data: [DONE]`;
    /// - `output_item.added` indices are 0, 1, 2, ... and each item is closed
    ///   by one `output_item.done` with the same index; no item event outside
    ///   its added..done window; content parts opened and closed in pairs;
    /// - deltas concatenate to the `done` text/arguments;
    /// - the terminal response's `output` equals the items of the `done` events.
    pub fn assert_well_formed(&self) {
        assert_eq!(self.status, 200, "stream status; body: {}", self.raw);
        assert!(
            self.content_type.starts_with("text/event-stream"),
            "content-type {}",
            self.content_type
        );
        assert!(self.done, "stream did not end with data: [DONE]");
        assert!(self.raw.ends_with("data: [DONE]\n\n"), "[DONE] is not last");
        assert!(self.events.len() >= 3, "too few events: {:?}", self.types());
        for (i, (name, data)) in self.events.iter().enumerate() {
            assert_eq!(
                Some(name.as_str()),
                data["type"].as_str(),
                "event {i}: name != type"
            );
            assert_eq!(
                data["sequence_number"].as_u64(),
                Some(i as u64),
                "event {i}: sequence_number"
            );
        }
        let types = self.types();
        assert_eq!(types[0], "response.created");
        assert_eq!(types[1], "response.in_progress");
        let terminal = [
            "response.completed",
            "response.failed",
            "response.incomplete",
            "response.cancelled",
            "response.requires_action",
        ];
        let n_terminal = types.iter().filter(|t| terminal.contains(t)).count();
        assert_eq!(n_terminal, 1, "terminal events: {types:?}");
        assert!(
            terminal.contains(types.last().expect("events")),
            "last event {types:?}"
        );
        assert_eq!(
            types.iter().filter(|t| **t == "response.created").count(),
            1
        );
        assert_eq!(
            types
                .iter()
                .filter(|t| **t == "response.in_progress")
                .count(),
            1
        );

        let mut opened: Vec<Value> = Vec::new();
        let mut closed: HashMap<usize, Value> = HashMap::new();
        let mut open_parts: HashMap<(usize, u64), String> = HashMap::new();
        let mut text_acc: HashMap<(usize, u64), String> = HashMap::new();
        let mut args_acc: HashMap<usize, String> = HashMap::new();
        for (i, (name, d)) in self.events.iter().enumerate() {
            let idx = d["output_index"].as_u64().map(|x| x as usize);
            let in_window = |idx: usize| idx < opened.len() && !closed.contains_key(&idx);
            match name.as_str() {
                "response.output_item.added" => {
                    let idx = idx.expect("output_index");
                    assert_eq!(idx, opened.len(), "event {i}: output_index of added item");
                    opened.push(d["item"].clone());
                }
                "response.output_item.done" => {
                    let idx = idx.expect("output_index");
                    assert!(in_window(idx), "event {i}: done for item {idx} not open");
                    assert!(
                        !open_parts.keys().any(|(o, _)| *o == idx),
                        "event {i}: item {idx} closed with open content parts"
                    );
                    assert_eq!(
                        opened[idx]["id"], d["item"]["id"],
                        "event {i}: item id changed"
                    );
                    closed.insert(idx, d["item"].clone());
                }
                "response.content_part.added" => {
                    let idx = idx.expect("output_index");
                    assert!(in_window(idx), "event {i}: part on closed item");
                    let ci = d["content_index"].as_u64().expect("content_index");
                    let prev = open_parts.insert((idx, ci), String::new());
                    assert!(prev.is_none(), "event {i}: part opened twice");
                }
                "response.content_part.done" => {
                    let idx = idx.expect("output_index");
                    let ci = d["content_index"].as_u64().expect("content_index");
                    assert!(
                        open_parts.remove(&(idx, ci)).is_some(),
                        "event {i}: part not open"
                    );
                }
                "response.output_text.delta"
                | "response.reasoning.delta"
                | "response.refusal.delta" => {
                    let idx = idx.expect("output_index");
                    let ci = d["content_index"].as_u64().expect("content_index");
                    assert!(
                        open_parts.contains_key(&(idx, ci)),
                        "event {i}: delta outside part"
                    );
                    text_acc
                        .entry((idx, ci))
                        .or_default()
                        .push_str(d["delta"].as_str().expect("delta"));
                }
                "response.output_text.done"
                | "response.reasoning.done"
                | "response.refusal.done" => {
                    let idx = idx.expect("output_index");
                    let ci = d["content_index"].as_u64().expect("content_index");
                    let full = d["text"].as_str().or(d["refusal"].as_str()).expect("text");
                    let acc = text_acc.remove(&(idx, ci)).unwrap_or_default();
                    assert_eq!(acc, full, "event {i}: deltas != done text");
                }
                "response.function_call_arguments.delta" => {
                    let idx = idx.expect("output_index");
                    assert!(in_window(idx), "event {i}: args delta on closed item");
                    args_acc
                        .entry(idx)
                        .or_default()
                        .push_str(d["delta"].as_str().expect("delta"));
                }
                "response.function_call_arguments.done" => {
                    let idx = idx.expect("output_index");
                    let acc = args_acc.remove(&idx).unwrap_or_default();
                    assert_eq!(
                        Some(acc.as_str()),
                        d["arguments"].as_str(),
                        "event {i}: args"
                    );
                }
                _ => {
                    if let Some(idx) = idx {
                        assert!(in_window(idx), "event {i} ({name}) outside item window");
                    }
                }
            }
        }
        assert_eq!(closed.len(), opened.len(), "items opened but never closed");
        let output = self.final_response()["output"]
            .as_array()
            .expect("final response output");
        assert_eq!(
            output.len(),
            opened.len(),
            "final output length vs items streamed"
        );
        for (i, item) in output.iter().enumerate() {
            assert_eq!(
                item, &closed[&i],
                "final output[{i}] differs from its output_item.done"
            );
        }
        for (name, d) in &self.events[..2] {
            assert_eq!(d["response"]["status"], "in_progress", "{name} status");
        }
    }
}

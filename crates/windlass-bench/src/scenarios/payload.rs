//! Request shapes of the cost curve: a prompt of a given size and a stored
//! history of a given length, each with the direct request carrying the
//! same transcript as `messages`.

use serde_json::{json, Value};

use super::{check_windlass, MODEL};
use crate::env::Bench;

const PROMPT: &str = "Say hello to the benchmark.";

/// Items per stored response while a long history is built (a request
/// may carry at most 10,000 input items).
const HISTORY_CHUNK: usize = 1000;

/// The prompt, padded with words to `bytes` (at least the plain prompt).
pub(crate) fn prompt(bytes: usize) -> String {
    let mut p = String::with_capacity(bytes.max(PROMPT.len()));
    p.push_str(PROMPT);
    while p.len() + 6 <= bytes {
        p.push_str(" words");
    }
    p
}

fn history_text(i: usize) -> String {
    format!("History message number {i} of a long conversation.")
}

/// A stored history: a chain of responses holding `items` input messages
/// in all (alternately user and assistant), built through Windlass. Returns
/// the last response's id and the same transcript as chat `messages`
/// (input and every stored output, in order).
pub(crate) async fn history(bench: &Bench, items: usize) -> Result<(String, Vec<Value>), String> {
    let mut previous: Option<String> = None;
    let mut messages = Vec::with_capacity(items + items / HISTORY_CHUNK + 1);
    let mut done = 0;
    while done < items {
        let n = HISTORY_CHUNK.min(items - done);
        let input: Vec<Value> = (done..done + n)
            .map(|i| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                json!({"type": "message", "role": role, "content": history_text(i)})
            })
            .collect();
        for m in &input {
            messages.push(json!({"role": m["role"], "content": m["content"]}));
        }
        let mut body = json!({"model": MODEL, "input": input, "store": true});
        if let Some(p) = &previous {
            body["previous_response_id"] = json!(p);
        }
        let resp = check_windlass(bench, &body).await?;
        let text = resp["output"][0]["content"][0]["text"]
            .as_str()
            .ok_or_else(|| format!("history response without text: {resp}"))?;
        messages.push(json!({"role": "assistant", "content": text}));
        previous = Some(
            resp["id"]
                .as_str()
                .ok_or("history response without id")?
                .to_owned(),
        );
        done += n;
    }
    previous
        .map(|p| (p, messages))
        .ok_or_else(|| "history of zero items".to_owned())
}

//! The OpenAI Responses API wire (`POST /v1/responses`) for a [`Turn`]:
//! the `response` object, and its streamed events as OpenAI documents them
//! (`response.created`, `response.output_item.added`, the text, reasoning
//! and argument deltas, `response.output_item.done`, `response.completed`).

use serde_json::{json, Value};

use crate::event_frames::EventFrames;
use crate::sse::{pieces, Frames};
use crate::turn::Turn;

/// Everything the encoder needs about one output item.
enum Out<'a> {
    Reasoning(&'a str),
    Message(&'a str),
    Call(usize),
}

fn outputs<'a>(turn: &'a Turn<'_>) -> Vec<Out<'a>> {
    let reply = turn.reply;
    let mut out = Vec::new();
    if let Some(r) = &reply.reasoning {
        out.push(Out::Reasoning(r));
    }
    if let Some(c) = &reply.content {
        out.push(Out::Message(c));
    }
    out.extend((0..reply.tool_calls.len()).map(Out::Call));
    out
}

fn item_id(turn: &Turn<'_>, prefix: &str, i: usize) -> String {
    format!("{prefix}_{}_{i}", turn.id)
}

/// The finished output item `i`.
fn item(turn: &Turn<'_>, i: usize, out: &Out<'_>) -> Value {
    match out {
        Out::Reasoning(text) => {
            let mut v = json!({
                "type": "reasoning", "id": item_id(turn, "rs", i), "summary": [],
                "content": [{"type": "reasoning_text", "text": text}],
            });
            if let Some(sealed) = &turn.reply.reasoning_signature {
                v["encrypted_content"] = json!(sealed);
            }
            v
        }
        Out::Message(text) => json!({
            "type": "message", "id": item_id(turn, "msg", i), "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Out::Call(c) => {
            let call = &turn.reply.tool_calls[*c];
            json!({
                "type": "function_call", "id": item_id(turn, "fc", i), "status": "completed",
                "call_id": turn.call_ids[*c], "name": call.name, "arguments": call.arguments,
            })
        }
    }
}

fn usage(turn: &Turn<'_>) -> Value {
    match turn.usage {
        Some(u) => json!({
            "input_tokens": u.prompt,
            "input_tokens_details": {"cached_tokens": u.cached},
            "output_tokens": u.completion,
            "output_tokens_details": {"reasoning_tokens": u.reasoning},
            "total_tokens": u.prompt + u.completion,
        }),
        None => Value::Null,
    }
}

/// The `response` object; `output` empty and status `in_progress` for
/// `response.created`.
fn response(turn: &Turn<'_>, finished: bool) -> Value {
    let incomplete = turn.finish_reason() == "length";
    let (status, output) = if finished {
        let items = outputs(turn);
        let output: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(i, o)| item(turn, i, o))
            .collect();
        (
            if incomplete {
                "incomplete"
            } else {
                "completed"
            },
            output,
        )
    } else {
        ("in_progress", Vec::new())
    };
    json!({
        "id": turn.id, "object": "response", "created_at": turn.created,
        "status": status, "model": turn.model, "output": output,
        "incomplete_details": if finished && incomplete {
            json!({"reason": "max_output_tokens"})
        } else {
            Value::Null
        },
        "error": null,
        "usage": if finished { usage(turn) } else { Value::Null },
    })
}

/// The non-streamed body.
pub(crate) fn response_body(turn: &Turn<'_>) -> Value {
    response(turn, true)
}

struct Seq<'a> {
    frames: EventFrames,
    next: u64,
    turn: &'a Turn<'a>,
}

impl Seq<'_> {
    fn push(&mut self, mut event: Value) {
        event["sequence_number"] = json!(self.next);
        self.next += 1;
        self.frames.push(&event);
    }
}

/// The streamed events.
pub(crate) fn encode(turn: &Turn<'_>) -> Frames {
    let n = turn.reply.chunk_chars;
    let mut s = Seq {
        frames: EventFrames::default(),
        next: 0,
        turn,
    };
    s.push(json!({"type": "response.created", "response": response(turn, false)}));
    s.push(json!({"type": "response.in_progress", "response": response(turn, false)}));
    for (i, out) in outputs(turn).iter().enumerate() {
        let done = item(turn, i, out);
        let id = done["id"].clone();
        let added = match out {
            Out::Reasoning(_) => json!({"type": "reasoning", "id": id, "summary": []}),
            Out::Message(_) => json!({"type": "message", "id": id, "status": "in_progress",
                                      "role": "assistant", "content": []}),
            Out::Call(_) => {
                let mut v = done.clone();
                v["arguments"] = json!("");
                v["status"] = json!("in_progress");
                v
            }
        };
        s.push(json!({"type": "response.output_item.added", "output_index": i, "item": added}));
        match out {
            Out::Reasoning(text) => {
                for piece in pieces(text, n) {
                    s.push(
                        json!({"type": "response.reasoning_text.delta", "item_id": id,
                                  "output_index": i, "content_index": 0, "delta": piece}),
                    );
                }
                s.push(
                    json!({"type": "response.reasoning_text.done", "item_id": id,
                              "output_index": i, "content_index": 0, "text": text}),
                );
            }
            Out::Message(text) => {
                let part = |t: &str| json!({"type": "output_text", "text": t, "annotations": []});
                s.push(json!({"type": "response.content_part.added", "item_id": id,
                              "output_index": i, "content_index": 0, "part": part("")}));
                for piece in pieces(text, n) {
                    s.push(json!({"type": "response.output_text.delta", "item_id": id,
                                  "output_index": i, "content_index": 0, "delta": piece,
                                  "logprobs": []}));
                }
                s.push(json!({"type": "response.output_text.done", "item_id": id,
                              "output_index": i, "content_index": 0, "text": text,
                              "logprobs": []}));
                s.push(json!({"type": "response.content_part.done", "item_id": id,
                              "output_index": i, "content_index": 0, "part": part(text)}));
            }
            Out::Call(c) => {
                let arguments = &s.turn.reply.tool_calls[*c].arguments;
                for piece in pieces(arguments, n) {
                    s.push(json!({"type": "response.function_call_arguments.delta",
                                  "item_id": id, "output_index": i, "delta": piece}));
                }
                s.push(json!({"type": "response.function_call_arguments.done",
                              "item_id": id, "output_index": i, "arguments": arguments}));
            }
        }
        s.push(json!({"type": "response.output_item.done", "output_index": i, "item": done}));
    }
    let finished = response(turn, true);
    let kind = if finished["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    s.push(json!({"type": kind, "response": finished}));
    let next = s.next;
    s.frames.finish(&turn.reply.end, |message| {
        json!({"type": "error", "code": "server_error", "message": message,
               "param": null, "sequence_number": next})
    })
}

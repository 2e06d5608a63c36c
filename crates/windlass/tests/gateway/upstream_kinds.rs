//! The same loop scenarios through every upstream kind (chat completions,
//! Responses API, Anthropic Messages), each against the scripted fake
//! speaking that vendor's wire format, as JSON and as SSE.

use std::time::Duration;

use crate::kinds_support::*;
use serde_json::{json, Value};
use windlass_providers::UpstreamKind;
use windlass_testkit::live::{wait_for_status, LiveStream};
use windlass_testkit::scenario::*;
use windlass_testkit::{MockBehavior, MockExecutor, Reply};

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn plain_text_with_usage() {
    for kind in KINDS {
        for mode in MODES {
            let gw = gateway(kind, Vec::new()).await;
            gw.upstream.push(
                Reply::text("Hello from every kind")
                    .usage(12, 3)
                    .cached_tokens(2),
            );
            let run = create(&gw, mode, &json!({"model": "m", "input": "hi"})).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(run.status(), "completed", "{what}");
            assert_eq!(final_text(&run.resp), "Hello from every kind", "{what}");
            let usage = &run.resp["usage"];
            assert_eq!(usage["input_tokens"], 12, "{what}");
            assert_eq!(usage["output_tokens"], 3, "{what}");
            assert_eq!(usage["total_tokens"], 15, "{what}");
            assert_eq!(usage["input_tokens_details"]["cached_tokens"], 2, "{what}");
            assert_wire_format(kind, &gw);
            assert_eq!(
                gw.upstream.last_request().unwrap()["stream"],
                mode == Mode::Sse
            );
        }
    }
}

#[tokio::test]
async fn three_turn_tool_loop_sums_usage() {
    for kind in KINDS {
        for mode in MODES {
            let mock = MockExecutor::new()
                .tool("get_weather", MockBehavior::Echo)
                .tool("get_time", MockBehavior::Echo);
            let gw = gateway(kind, vec![mock.arc()]).await;
            gw.upstream.push(
                Reply::tool_call("get_weather", r#"{"city":"Paris"}"#)
                    .with_call_id("call_1")
                    .usage(10, 2),
            );
            gw.upstream.push(
                Reply::tool_call("get_time", r#"{"tz":"CET"}"#)
                    .with_call_id("call_2")
                    .usage(20, 2),
            );
            gw.upstream.push(Reply::text("18C at noon.").usage(30, 4));
            let body = json!({"model": "m", "input": "Weather and time in Paris?",
                              "tools": funcs(&["get_weather", "get_time"])});
            let run = create(&gw, mode, &body).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(run.status(), "completed", "{what}");
            assert_eq!(output_types(&run.resp), TWO_CALLS_THEN_ANSWER, "{what}");
            assert_eq!(
                output(&run.resp)[0]["arguments"],
                r#"{"city":"Paris"}"#,
                "{what}"
            );
            assert_eq!(final_text(&run.resp), "18C at noon.");
            assert_eq!(run.resp["usage"]["input_tokens"], 60, "{what}");
            assert_eq!(run.resp["usage"]["output_tokens"], 8, "{what}");
            assert_eq!(mock.calls().len(), 2);
            let reqs = gw.upstream.requests();
            assert_eq!(reqs.len(), 3, "{what}");
            let last = &reqs[2];
            let names: Vec<_> = sent_calls(kind, last).into_iter().collect();
            assert_eq!(
                names,
                [
                    ("call_1".into(), "get_weather".into()),
                    ("call_2".into(), "get_time".into())
                ],
                "{kind:?}: {last}"
            );
            let results = sent_results(kind, last);
            assert_eq!(results.len(), 2, "{kind:?}: {last}");
            assert_eq!(results[0], ("call_1".into(), r#"{"city":"Paris"}"#.into()));
            assert_wire_format(kind, &gw);
        }
    }
}

#[tokio::test]
async fn client_tool_requires_action_then_continues() {
    for kind in KINDS {
        for mode in MODES {
            let gw = gateway(kind, Vec::new()).await;
            gw.upstream
                .push(Reply::tool_call("get_weather", r#"{"city":"Oslo"}"#).with_call_id("call_c"));
            let tools = funcs(&["get_weather"]);
            let body = json!({"model": "m", "input": "Weather in Oslo?", "tools": tools});
            let run = create(&gw, mode, &body).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(run.status(), "requires_action", "{what}");
            assert_eq!(output_types(&run.resp), ["function_call"], "{what}");
            assert_eq!(output(&run.resp)[0]["call_id"], "call_c");

            gw.upstream.push(Reply::text("Cold: -3C."));
            let next = json!({"model": "m", "previous_response_id": run.id(), "tools": tools,
                              "input": [{"type": "function_call_output", "call_id": "call_c",
                                         "output": "-3C"}]});
            let run = create(&gw, mode, &next).await;
            assert_eq!(run.status(), "completed", "{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(final_text(&run.resp), "Cold: -3C.");
            let req = gw.upstream.last_request().unwrap();
            assert_eq!(
                sent_calls(kind, &req),
                [("call_c".into(), "get_weather".into())]
            );
            assert_eq!(
                sent_results(kind, &req),
                [("call_c".into(), "-3C".into())],
                "{req}"
            );
        }
    }
}

#[tokio::test]
async fn reasoning_is_carried_with_its_seal() {
    for kind in [UpstreamKind::Responses, UpstreamKind::Anthropic] {
        for mode in MODES {
            let gw = gateway(kind, Vec::new()).await;
            gw.upstream.push(
                Reply::text("Four.")
                    .reasoning("2+2 is 4")
                    .reasoning_signature("sealed-abc"),
            );
            let run = create(&gw, mode, &json!({"model": "m", "input": "2+2?"})).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(output_types(&run.resp), ["reasoning", "message"], "{what}");
            let reasoning = &output(&run.resp)[0];
            assert_eq!(reasoning["encrypted_content"], "sealed-abc", "{what}");
            assert_eq!(reasoning["content"][0]["text"], "2+2 is 4", "{what}");

            gw.upstream.push(Reply::text("Eight."));
            let next = json!({"model": "m", "previous_response_id": run.id(), "input": "4+4?"});
            create(&gw, mode, &next).await;
            let req = gw.upstream.last_request().unwrap();
            match kind {
                UpstreamKind::Responses => {
                    let item = req["input"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|i| i["type"] == "reasoning")
                        .unwrap_or_else(|| panic!("no reasoning replayed: {req}"));
                    assert_eq!(item["encrypted_content"], "sealed-abc");
                    assert!(item.get("id").is_none(), "{item}");
                }
                _ => {
                    let block = blocks(&req, "thinking").next().expect("thinking replayed");
                    assert_eq!(block["signature"], "sealed-abc");
                    assert_eq!(block["thinking"], "2+2 is 4");
                }
            }
        }
    }
}

#[tokio::test]
async fn max_tokens_stop_is_incomplete() {
    for kind in KINDS {
        for mode in MODES {
            let gw = gateway(kind, Vec::new()).await;
            gw.upstream
                .push(Reply::text("cut sh").finish_reason("length"));
            let run = create(&gw, mode, &json!({"model": "m", "input": "hi"})).await;
            assert_eq!(
                run.status(),
                "incomplete",
                "{kind:?}/{mode:?}: {}",
                run.resp
            );
            assert_eq!(
                run.resp["incomplete_details"]["reason"],
                "max_output_tokens"
            );
        }
    }
}

#[tokio::test]
async fn upstream_errors_fail_the_response() {
    for kind in KINDS {
        let gw = gateway(kind, Vec::new()).await;
        gw.upstream.push(Reply::error(500, "model exploded"));
        let (s, b) = gw
            .post_json("/v1/responses", &json!({"model": "m", "input": "hi"}))
            .await;
        assert_eq!(s, 502, "{kind:?}: {b}");
        let message = b["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("model exploded"), "{kind:?}: {b}");

        gw.upstream
            .push(Reply::text("Hello there").error_event_after(3, "CUDA out of memory"));
        let cap = gw.stream(&json!({"model": "m", "input": "hi"})).await;
        cap.assert_well_formed();
        let fin = cap.final_response();
        assert_eq!(fin["status"], "failed", "{kind:?}: {fin}");
        let message = fin["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("CUDA out of memory"), "{kind:?}: {fin}");
    }
}

#[tokio::test]
async fn a_dropped_stream_cancels_the_upstream_call() {
    for kind in KINDS {
        let gw = gateway(kind, Vec::new()).await;
        gw.upstream.push(
            Reply::text("word ".repeat(60))
                .chunk_chars(5)
                .delay_between_chunks(Duration::from_millis(40)),
        );
        let mut live = LiveStream::open(&gw, &json!({"model": "m", "input": "hi"})).await;
        assert!(
            live.read_until("response.output_text.delta", WAIT).await,
            "{}",
            live.raw
        );
        let id = live.response_id();
        drop(live);
        assert!(gw.upstream.wait_for_disconnects(1, WAIT).await, "{kind:?}");
        let got: Value = wait_for_status(&gw, &id, "cancelled", WAIT).await;
        for item in got["output"].as_array().unwrap() {
            assert_ne!(item["status"], "in_progress", "{kind:?}: {got}");
        }
    }
}

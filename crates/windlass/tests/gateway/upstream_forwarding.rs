//! Request fields forwarded per upstream kind (issue 24, phase 1), through
//! the gateway against the scripted fake of each kind: reasoning summaries
//! made from a kind's reasoning text, and refusals naming the field a kind
//! cannot honour.

use crate::kinds_support::*;
use serde_json::json;
use windlass_providers::UpstreamKind;
use windlass_testkit::scenario::*;
use windlass_testkit::Reply;

#[tokio::test]
async fn reasoning_text_becomes_the_summary_when_one_is_asked_for() {
    for kind in [UpstreamKind::Chat, UpstreamKind::Anthropic] {
        for mode in MODES {
            let gw = gateway(kind, Vec::new()).await;
            let mut reply = Reply::text("Four.").reasoning("2+2 is 4");
            if kind == UpstreamKind::Anthropic {
                reply = reply.reasoning_signature("sealed-abc");
            }
            gw.upstream.push(reply);
            let body = json!({"model": "m", "input": "2+2?", "reasoning": {"summary": "auto"}});
            let run = create(&gw, mode, &body).await;
            let what = format!("{kind:?}/{mode:?}: {}", run.resp);
            assert_eq!(output_types(&run.resp), ["reasoning", "message"], "{what}");
            let reasoning = &output(&run.resp)[0];
            assert_eq!(
                reasoning["summary"],
                json!([{"type": "summary_text", "text": "2+2 is 4"}]),
                "{what}"
            );
            assert!(reasoning.get("content").is_none(), "{what}");
            if let Some(sse) = &run.sse {
                let mut types: Vec<&str> = sse
                    .types()
                    .into_iter()
                    .filter(|t| t.contains("reasoning"))
                    .collect();
                // The text comes in as many deltas as the fake sends.
                types.dedup();
                assert_eq!(
                    types,
                    [
                        "response.reasoning_summary_part.added",
                        "response.reasoning_summary_text.delta",
                        "response.reasoning_summary_text.done",
                        "response.reasoning_summary_part.done",
                    ],
                    "{what}"
                );
                let done = sse.of_type("response.reasoning_summary_text.done");
                assert_eq!(done[0]["text"], "2+2 is 4", "{what}");
                assert_eq!(done[0]["summary_index"], 0, "{what}");
            }
            if kind == UpstreamKind::Anthropic {
                // Replayed as thinking with its signature, from the summary.
                gw.upstream.push(Reply::text("Eight."));
                let next = json!({"model": "m", "previous_response_id": run.id(), "input": "4+4?"});
                create(&gw, mode, &next).await;
                let req = gw.upstream.last_request().unwrap();
                let block = blocks(&req, "thinking").next().expect("thinking replayed");
                assert_eq!(block["thinking"], "2+2 is 4", "{what}");
                assert_eq!(block["signature"], "sealed-abc", "{what}");
            }
        }
    }
}

#[tokio::test]
async fn without_a_summary_request_reasoning_stays_text() {
    let gw = gateway(UpstreamKind::Chat, Vec::new()).await;
    gw.upstream.push(Reply::text("Four.").reasoning("2+2 is 4"));
    let run = create(&gw, Mode::Json, &json!({"model": "m", "input": "2+2?"})).await;
    let reasoning = &output(&run.resp)[0];
    assert_eq!(reasoning["content"][0]["text"], "2+2 is 4");
    assert_eq!(reasoning["summary"], json!([]));
}

#[tokio::test]
async fn forwarded_fields_reach_the_upstream() {
    let body = json!({
        "model": "m", "input": "hi",
        "service_tier": "flex", "prompt_cache_key": "k1", "safety_identifier": "s1",
        "user": "u1", "text": {"verbosity": "low"}, "reasoning": {"effort": "low"},
        "top_logprobs": 2, "include": ["message.output_text.logprobs"],
    });
    let gw = gateway(UpstreamKind::Chat, Vec::new()).await;
    gw.upstream.push(Reply::text("ok"));
    create(&gw, Mode::Json, &body).await;
    let req = gw.upstream.last_request().unwrap();
    for (key, value) in [
        ("service_tier", json!("flex")),
        ("prompt_cache_key", json!("k1")),
        ("safety_identifier", json!("s1")),
        ("user", json!("u1")),
        ("verbosity", json!("low")),
        ("reasoning_effort", json!("low")),
        ("logprobs", json!(true)),
        ("top_logprobs", json!(2)),
    ] {
        assert_eq!(req[key], value, "{key}: {req}");
    }

    let gw = gateway(UpstreamKind::Responses, Vec::new()).await;
    gw.upstream.push(Reply::text("ok"));
    create(&gw, Mode::Json, &body).await;
    let req = gw.upstream.last_request().unwrap();
    assert_eq!(req["text"]["verbosity"], "low", "{req}");
    assert_eq!(req["service_tier"], "flex", "{req}");
    assert_eq!(req["prompt_cache_key"], "k1", "{req}");
    assert_eq!(req["safety_identifier"], "s1", "{req}");
    assert_eq!(
        req["include"],
        json!([
            "reasoning.encrypted_content",
            "message.output_text.logprobs"
        ]),
        "{req}"
    );
}

#[tokio::test]
async fn anthropic_refuses_by_name_what_it_cannot_honour() {
    let gw = gateway(UpstreamKind::Anthropic, Vec::new()).await;
    for (extra, param) in [
        (
            json!({"include": ["message.output_text.logprobs"]}),
            "include",
        ),
        (json!({"top_logprobs": 3}), "top_logprobs"),
        (json!({"text": {"verbosity": "high"}}), "text.verbosity"),
        (json!({"presence_penalty": 0.5}), "presence_penalty"),
    ] {
        let mut body = json!({"model": "m", "input": "hi"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, err) = gw.post_json("/v1/responses", &body).await;
        assert_eq!(status, 400, "{param}: {err}");
        assert_eq!(err["error"]["param"], param, "{err}");
    }
    assert!(
        gw.upstream.last_request().is_none(),
        "nothing reached the upstream"
    );
}

/// The upstream's logprobs reach `output_text.logprobs` and, streamed, the
/// `output_text.delta` and `.done` events.
#[tokio::test]
async fn logprobs_arrive_in_json_and_streams() {
    for mode in MODES {
        let gw = gateway(UpstreamKind::Chat, Vec::new()).await;
        gw.upstream
            .push(Reply::text("Hello there").chunk_chars(4).logprobs());
        let body = json!({"model": "m", "input": "hi", "top_logprobs": 2,
                          "include": ["message.output_text.logprobs"]});
        let run = create(&gw, mode, &body).await;
        let what = format!("{mode:?}: {}", run.resp);
        let part = &output(&run.resp)[0]["content"][0];
        let tokens: Vec<&str> = part["logprobs"]
            .as_array()
            .unwrap_or_else(|| panic!("no logprobs: {what}"))
            .iter()
            .map(|l| l["token"].as_str().unwrap())
            .collect();
        assert_eq!(tokens.concat(), "Hello there", "{what}");
        assert_eq!(part["logprobs"][0]["logprob"], -0.5, "{what}");
        assert_eq!(
            part["logprobs"][0]["top_logprobs"][1]["token"], "~",
            "{what}"
        );
        assert_eq!(part["logprobs"][0]["bytes"], json!(b"Hell"), "{what}");
        if let Some(sse) = &run.sse {
            let deltas = sse.of_type("response.output_text.delta");
            for d in &deltas {
                assert_eq!(d["logprobs"][0]["token"], d["delta"], "{what}");
            }
            let done = sse.of_type("response.output_text.done");
            assert_eq!(done[0]["logprobs"], part["logprobs"], "{what}");
        }
    }
    // Not asked for (no include): nothing is computed or shown.
    let gw = gateway(UpstreamKind::Chat, Vec::new()).await;
    gw.upstream.push(Reply::text("Hello").logprobs());
    let run = create(
        &gw,
        Mode::Json,
        &json!({"model": "m", "input": "hi", "top_logprobs": 2}),
    )
    .await;
    assert!(
        output(&run.resp)[0]["content"][0].get("logprobs").is_none(),
        "{}",
        run.resp
    );
    let req = gw.upstream.last_request().unwrap();
    assert!(req.get("logprobs").is_none(), "{req}");
}

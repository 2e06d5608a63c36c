//! Targeted parsing cases for the wire types: the input shorthands, the
//! open enums (unknown types kept, known types with bad fields rejected by
//! name), `tool_choice`, the request's `extra`, the response status state
//! machine, usage accounting and ids.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use serde_json::{json, Value};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::*;

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

fn err_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(v: Value) -> String {
    match parse::<T>(v.clone()) {
        Ok(x) => panic!("expected an error for {v}, got {x:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- input ----

#[test]
fn input_string_is_text() {
    let req: CreateResponseRequest = parse(json!({"model": "m", "input": "Hello"})).unwrap();
    assert_eq!(req.input, Some(Input::Text("Hello".into())));
    // The string shorthand stands for one user message.
    let items = req.input.unwrap().into_items();
    assert_eq!(items, vec![Item::user_text("Hello")]);
    match &items[0] {
        Item::Message(m) => {
            assert_eq!(m.role, Role::User);
            assert_eq!(m.content, MessageContent::Text("Hello".into()));
        }
        other => panic!("not a message: {other:?}"),
    }
    // And it serializes back as a bare string.
    let back = serde_json::to_value(Input::Text("Hello".into())).unwrap();
    assert_eq!(back, json!("Hello"));
}

#[test]
fn input_items_are_items() {
    let req: CreateResponseRequest = parse(json!({
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "call_1", "output": "42"}
        ]
    }))
    .unwrap();
    let Some(Input::Items(items)) = req.input else {
        panic!("input is not items: {:?}", req.input)
    };
    assert_eq!(items.len(), 2);
    assert!(matches!(&items[0], Item::Message(m) if m.role == Role::User));
    assert!(matches!(&items[1], Item::FunctionCallOutput(o) if o.call_id == "call_1"));
    assert_eq!(
        serde_json::to_value(Input::Items(items)).unwrap()[1]["type"],
        json!("function_call_output")
    );
}

#[test]
fn input_of_other_json_types_is_rejected() {
    for bad in [json!(5), json!({"role": "user"}), json!(true)] {
        let e = err_of::<CreateResponseRequest>(json!({ "input": bad }));
        assert!(e.contains("input"), "error does not name `input`: {e}");
    }
}

#[test]
fn bad_input_item_error_names_its_index_and_field() {
    let e = err_of::<CreateResponseRequest>(json!({
        "input": [
            {"role": "user", "content": "ok"},
            {"type": "function_call", "call_id": "c", "name": "f"}
        ]
    }));
    assert!(e.contains("input[1]"), "no index in: {e}");
    assert!(e.contains("arguments"), "no field name in: {e}");
}

#[test]
fn untyped_role_content_is_a_message() {
    let item: Item = parse(json!({"role": "user", "content": "hi"})).unwrap();
    assert_eq!(item, Item::user_text("hi"));
    assert_eq!(item.type_name(), "message");
    // Re-serialized with its type.
    let v = serde_json::to_value(&item).unwrap();
    assert_eq!(
        v,
        json!({"type": "message", "role": "user", "content": "hi"})
    );
}

#[test]
fn untyped_message_with_bad_fields_is_an_error() {
    let e = err_of::<Item>(json!({"role": "pirate", "content": "hi"}));
    assert!(e.contains("message"), "{e}");
    let e = err_of::<Item>(json!({"role": "user"}));
    assert!(e.contains("content"), "{e}");
}

#[test]
fn untyped_id_is_an_item_reference() {
    let item: Item = parse(json!({"id": "msg_1"})).unwrap();
    assert_eq!(
        item,
        Item::ItemReference(ItemReference { id: "msg_1".into() })
    );
    assert_eq!(item.id(), Some("msg_1"));
    assert_eq!(
        serde_json::to_value(&item).unwrap(),
        json!({"type": "item_reference", "id": "msg_1"})
    );
    let typed: Item = parse(json!({"type": "item_reference", "id": "msg_1"})).unwrap();
    assert_eq!(typed, item);
}

/// The contract types `ItemReferenceParam.type` as `"item_reference" | null`.
#[test]
fn null_type_item_reference_is_accepted() {
    let item: Item = parse(json!({"type": null, "id": "msg_1"})).unwrap();
    assert_eq!(
        item,
        Item::ItemReference(ItemReference { id: "msg_1".into() })
    );
}

#[test]
fn item_without_type_role_or_id_is_an_error() {
    let e = err_of::<Item>(json!({"content": "hi"}));
    assert!(e.contains("type"), "{e}");
    let e = err_of::<Item>(json!({"type": 7, "id": "x"}));
    assert!(e.contains("type"), "{e}");
}

#[test]
fn unknown_item_type_is_kept_verbatim() {
    let raw = json!({
        "type": "tool_search_call",
        "id": "ts_1",
        "status": "completed",
        "arguments": {"query": "rust", "hits": [1, 2.5, null, true]}
    });
    let item: Item = parse(raw.clone()).unwrap();
    assert_eq!(item, Item::Unknown(raw.clone()));
    assert_eq!(item.type_name(), "tool_search_call");
    assert_eq!(item.id(), Some("ts_1"));
    assert_eq!(serde_json::to_value(&item).unwrap(), raw);
    assert_eq!(
        serde_json::to_string(&item).unwrap(),
        serde_json::to_string(&raw).unwrap()
    );
}

#[test]
fn unknown_types_are_kept_for_every_open_enum() {
    let raw = json!({"type": "from_the_future", "x": [1, {"y": "z"}]});
    assert_eq!(
        parse::<ContentPart>(raw.clone()).unwrap(),
        ContentPart::Unknown(raw.clone())
    );
    assert_eq!(
        parse::<Tool>(raw.clone()).unwrap(),
        Tool::Unknown(raw.clone())
    );
    assert_eq!(
        parse::<ToolChoice>(raw.clone()).unwrap(),
        ToolChoice::Object(ToolChoiceObject::Unknown(raw.clone()))
    );
    assert_eq!(
        parse::<Annotation>(raw.clone()).unwrap(),
        Annotation::Unknown(raw.clone())
    );
    assert_eq!(
        parse::<TextFormat>(raw.clone()).unwrap(),
        TextFormat::Unknown(raw.clone())
    );
    for v in [
        serde_json::to_value(ContentPart::Unknown(raw.clone())).unwrap(),
        serde_json::to_value(Tool::Unknown(raw.clone())).unwrap(),
        serde_json::to_value(ToolChoice::Object(ToolChoiceObject::Unknown(raw.clone()))).unwrap(),
    ] {
        assert_eq!(v, raw);
    }
}

#[test]
fn message_missing_role_is_an_error_naming_role() {
    let e = err_of::<Item>(json!({"type": "message"}));
    assert!(e.contains("role"), "error does not mention `role`: {e}");
    let e = err_of::<Item>(json!({"type": "message", "content": "hi"}));
    assert!(e.contains("role"), "error does not mention `role`: {e}");
}

/// A known type with bad fields is an error naming the field, for every
/// open enum, never a silent `Unknown`.
#[test]
fn known_types_with_bad_fields_name_the_field() {
    fn first_err(target: &str, v: &Value) -> String {
        let r = match target {
            "Item" => parse::<Item>(v.clone()).map(|x| format!("{x:?}")),
            "ContentPart" => parse::<ContentPart>(v.clone()).map(|x| format!("{x:?}")),
            "Tool" => parse::<Tool>(v.clone()).map(|x| format!("{x:?}")),
            "ToolChoice" => parse::<ToolChoice>(v.clone()).map(|x| format!("{x:?}")),
            "TextFormat" => parse::<TextFormat>(v.clone()).map(|x| format!("{x:?}")),
            "Annotation" => parse::<Annotation>(v.clone()).map(|x| format!("{x:?}")),
            _ => unreachable!(),
        };
        match r {
            Ok(x) => panic!("{target} {v} parsed as {x}"),
            Err(e) => e,
        }
    }
    let cases = [
        (
            "Item",
            json!({"type": "function_call", "call_id": "c", "name": "f"}),
            "arguments",
        ),
        (
            "Item",
            json!({"type": "function_call_output", "output": "x"}),
            "call_id",
        ),
        ("Item", json!({"type": "compaction"}), "encrypted_content"),
        ("Item", json!({"type": "item_reference"}), "id"),
        (
            "Item",
            json!({"type": "mcp_list_tools", "id": "l", "server_label": "s"}),
            "tools",
        ),
        (
            "Item",
            json!({"type": "mcp_call", "id": "mcp_1", "server_label": "s", "name": "n"}),
            "arguments",
        ),
        (
            "Item",
            json!({"type": "mcp_approval_request", "id": "r", "name": "n", "arguments": "{}"}),
            "server_label",
        ),
        (
            "Item",
            json!({"type": "mcp_approval_response", "approve": true}),
            "approval_request_id",
        ),
        ("ContentPart", json!({"type": "input_text"}), "text"),
        ("ContentPart", json!({"type": "refusal"}), "refusal"),
        (
            "ContentPart",
            json!({"type": "input_image", "detail": "ultra"}),
            "ultra",
        ),
        ("ContentPart", json!({"type": "input_video"}), "video_url"),
        ("Tool", json!({"type": "function"}), "name"),
        (
            "Tool",
            json!({"type": "mcp", "server_url": "https://x"}),
            "server_label",
        ),
        ("ToolChoice", json!({"type": "function"}), "name"),
        ("ToolChoice", json!({"type": "allowed_tools"}), "tools"),
        ("ToolChoice", json!({"type": "mcp"}), "server_label"),
        (
            "TextFormat",
            json!({"type": "json_schema", "schema": {}}),
            "name",
        ),
        (
            "Annotation",
            json!({"type": "url_citation", "url": "u"}),
            "start_index",
        ),
    ];
    for (target, input, field) in cases {
        let e = first_err(target, &input);
        assert!(
            e.contains(field),
            "error for {target} {input} does not name `{field}`: {e}"
        );
        let tag = input["type"].as_str().unwrap();
        assert!(
            e.contains(tag),
            "error for {input} does not name the type: {e}"
        );
    }
}

#[test]
fn content_part_without_type_is_an_error() {
    let e = err_of::<ContentPart>(json!({"text": "hi"}));
    assert!(e.contains("type"), "{e}");
}

// -------------------------------------------------------------- content ----

#[test]
fn message_content_string_or_parts() {
    let text: Item =
        parse(json!({"type": "message", "role": "assistant", "content": "hi"})).unwrap();
    let Item::Message(m) = &text else {
        panic!("{text:?}")
    };
    assert_eq!(m.content, MessageContent::Text("hi".into()));
    assert_eq!(m.role, Role::Assistant);

    let parts: Item = parse(json!({
        "type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
        "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "refusal", "refusal": "b"},
            {"type": "output_text", "text": "c"}
        ]
    }))
    .unwrap();
    let Item::Message(m) = &parts else {
        panic!("{parts:?}")
    };
    assert_eq!(m.status, Some(ItemStatus::Completed));
    let MessageContent::Parts(p) = &m.content else {
        panic!("{:?}", m.content)
    };
    assert_eq!(p.len(), 3);
    assert_eq!(p[0], ContentPart::output_text("a"));
    assert_eq!(
        p[1],
        ContentPart::Refusal(RefusalPart {
            refusal: "b".into()
        })
    );
    // `annotations` defaults to empty when omitted.
    assert_eq!(p[2], ContentPart::output_text("c"));
    assert_eq!(m.content.joined_text(), "abc");
    assert_eq!(parts.id(), Some("msg_1"));

    let back = serde_json::to_value(&text).unwrap();
    assert_eq!(back["content"], json!("hi"));
    let back = serde_json::to_value(&parts).unwrap();
    assert_eq!(
        back["content"][2],
        json!({"type": "output_text", "text": "c", "annotations": []})
    );
}

#[test]
fn message_content_of_other_types_is_rejected() {
    let e = err_of::<Item>(json!({"type": "message", "role": "user", "content": 3}));
    assert!(e.contains("content"), "{e}");
    let e = err_of::<Item>(json!({"type": "message", "role": "user", "content": [{"text": "x"}]}));
    assert!(e.contains("type"), "{e}");
}

#[test]
fn function_call_output_string_or_parts() {
    let s: Item =
        parse(json!({"type": "function_call_output", "call_id": "c", "output": "42"})).unwrap();
    let Item::FunctionCallOutput(o) = &s else {
        panic!("{s:?}")
    };
    assert_eq!(o.output, ToolOutput::Text("42".into()));
    assert_eq!(serde_json::to_value(&s).unwrap()["output"], json!("42"));

    let parts_json = json!([
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"},
        {"type": "input_file", "file_url": "https://x/f.pdf", "filename": "f.pdf"}
    ]);
    let p: Item = parse(json!({
        "type": "function_call_output", "call_id": "c", "output": parts_json, "is_error": true
    }))
    .unwrap();
    let Item::FunctionCallOutput(o) = &p else {
        panic!("{p:?}")
    };
    assert_eq!(o.is_error, Some(true));
    let ToolOutput::Parts(parts) = &o.output else {
        panic!("{:?}", o.output)
    };
    assert_eq!(parts[0], ContentPart::input_text("see"));
    assert_eq!(
        parts[1],
        ContentPart::InputImage(ImagePart {
            image_url: Some("https://x/y.png".into()),
            file_id: None,
            detail: Some(ImageDetail::Low)
        })
    );
    assert!(
        matches!(&parts[2], ContentPart::InputFile(f) if f.filename.as_deref() == Some("f.pdf"))
    );
    assert_eq!(serde_json::to_value(&p).unwrap()["output"], parts_json);

    let e =
        err_of::<Item>(json!({"type": "function_call_output", "call_id": "c", "output": {"a": 1}}));
    assert!(e.contains("output"), "{e}");
}

// ---------------------------------------------------------- tool_choice ----

#[test]
fn tool_choice_modes() {
    for (s, mode) in [
        ("auto", ToolChoiceMode::Auto),
        ("none", ToolChoiceMode::None),
        ("required", ToolChoiceMode::Required),
    ] {
        let tc: ToolChoice = parse(json!(s)).unwrap();
        assert_eq!(tc, ToolChoice::Mode(mode));
        assert_eq!(serde_json::to_value(&tc).unwrap(), json!(s));
    }
    assert_eq!(
        ToolChoice::default(),
        ToolChoice::Mode(ToolChoiceMode::Auto)
    );
}

#[test]
fn tool_choice_function_object() {
    let raw = json!({"type": "function", "name": "get_weather"});
    let tc: ToolChoice = parse(raw.clone()).unwrap();
    assert_eq!(
        tc,
        ToolChoice::Object(ToolChoiceObject::Function(SpecificFunction {
            name: "get_weather".into()
        }))
    );
    assert_eq!(serde_json::to_value(&tc).unwrap(), raw);
}

#[test]
fn tool_choice_mcp_object() {
    let raw = json!({"type": "mcp", "server_label": "docs", "name": "search"});
    let tc: ToolChoice = parse(raw.clone()).unwrap();
    assert_eq!(
        tc,
        ToolChoice::Object(ToolChoiceObject::Mcp(SpecificMcp {
            server_label: "docs".into(),
            name: Some("search".into())
        }))
    );
    assert_eq!(serde_json::to_value(&tc).unwrap(), raw);
}

#[test]
fn tool_choice_allowed_tools_object() {
    let raw = json!({
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}]
    });
    let tc: ToolChoice = parse(raw.clone()).unwrap();
    let ToolChoice::Object(ToolChoiceObject::AllowedTools(at)) = &tc else {
        panic!("{tc:?}")
    };
    assert_eq!(at.mode, ToolChoiceMode::Required);
    assert_eq!(
        at.tools,
        vec![
            ToolChoiceObject::Function(SpecificFunction { name: "a".into() }),
            ToolChoiceObject::Function(SpecificFunction { name: "b".into() }),
        ]
    );
    assert_eq!(serde_json::to_value(&tc).unwrap(), raw);

    // `mode` is optional in the request and defaults to auto.
    let tc: ToolChoice =
        parse(json!({"type": "allowed_tools", "tools": [{"type": "function", "name": "a"}]}))
            .unwrap();
    let ToolChoice::Object(ToolChoiceObject::AllowedTools(at)) = &tc else {
        panic!("{tc:?}")
    };
    assert_eq!(at.mode, ToolChoiceMode::Auto);
}

#[test]
fn tool_choice_bad_values_are_errors() {
    let e = err_of::<ToolChoice>(json!("sometimes"));
    assert!(e.contains("tool_choice"), "{e}");
    assert!(err_of::<ToolChoice>(json!("Auto")).contains("tool_choice"));
    assert!(err_of::<ToolChoice>(json!(1)).contains("tool_choice"));
    assert!(err_of::<ToolChoice>(json!(null)).contains("tool_choice"));
    assert!(err_of::<ToolChoice>(json!({"name": "f"})).contains("type"));
    // Also inside a request.
    let e = err_of::<CreateResponseRequest>(json!({"tool_choice": "maybe"}));
    assert!(e.contains("tool_choice"), "{e}");
}

// -------------------------------------------------------------- request ----

#[test]
fn unknown_request_fields_land_in_extra() {
    let req: CreateResponseRequest = parse(json!({
        "model": "m",
        "input": "hi",
        "future_field": "conv_1",
        "moderation": {"type": "auto"},
        "temperature": 0.5
    }))
    .unwrap();
    assert_eq!(req.model.as_deref(), Some("m"));
    assert_eq!(req.temperature, Some(0.5));
    assert_eq!(req.extra.len(), 2, "extra = {:?}", req.extra);
    assert_eq!(req.extra["future_field"], json!("conv_1"));
    assert_eq!(req.extra["moderation"], json!({"type": "auto"}));
    // Known fields never land in extra.
    assert!(!req.extra.contains_key("model"));
    assert!(!req.extra.contains_key("temperature"));
    // And extra fields are re-serialized at the top level.
    let back = serde_json::to_value(&req).unwrap();
    assert_eq!(back["future_field"], json!("conv_1"));
    assert_eq!(back["moderation"], json!({"type": "auto"}));
}

#[test]
fn conversation_is_an_id_or_an_object() {
    for value in [json!("conv_1"), json!({"id": "conv_1"})] {
        let req: CreateResponseRequest =
            parse(json!({"model": "m", "conversation": value.clone()})).unwrap();
        assert_eq!(req.conversation.as_ref().map(|c| c.id()), Some("conv_1"));
        assert!(req.extra.is_empty());
        assert_eq!(serde_json::to_value(&req).unwrap()["conversation"], value);
    }
}

#[test]
fn known_request_fields_do_not_land_in_extra() {
    let req: CreateResponseRequest = parse(json!({
        "model": "m", "input": [], "previous_response_id": "resp_1",
        "include": ["reasoning.encrypted_content"], "tools": [], "tool_choice": "auto",
        "metadata": {"k": "v"}, "text": {"format": {"type": "text"}, "verbosity": "low"},
        "temperature": 1, "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0,
        "parallel_tool_calls": true, "stream": true,
        "stream_options": {"include_obfuscation": false}, "background": false,
        "max_output_tokens": 100, "max_tool_calls": 3,
        "reasoning": {"effort": "low", "summary": "auto"}, "safety_identifier": "s",
        "prompt_cache_key": "k", "truncation": "auto", "instructions": "be nice",
        "store": false, "service_tier": "auto", "top_logprobs": 2, "user": "u",
        "allowed_tools": ["a"]
    }))
    .unwrap();
    assert!(req.extra.is_empty(), "extra = {:?}", req.extra);
    assert_eq!(req.truncation, Some(Truncation::Auto));
    assert_eq!(
        req.reasoning,
        Some(ReasoningParam {
            effort: Some(ReasoningEffort::Low),
            summary: Some(ReasoningSummary::Auto)
        })
    );
}

// --------------------------------------------------------------- status ----

const ALL_STATUSES: [ResponseStatus; 7] = [
    ResponseStatus::Queued,
    ResponseStatus::InProgress,
    ResponseStatus::Completed,
    ResponseStatus::Incomplete,
    ResponseStatus::Failed,
    ResponseStatus::Cancelled,
    ResponseStatus::RequiresAction,
];

#[test]
fn status_terminality() {
    use ResponseStatus::*;
    for s in ALL_STATUSES {
        let expected = !matches!(s, Queued | InProgress);
        assert_eq!(s.is_terminal(), expected, "{s:?}");
    }
    assert!(RequiresAction.is_terminal());
}

#[test]
fn status_transitions() {
    use ResponseStatus::*;
    let allowed: &[(ResponseStatus, ResponseStatus)] = &[
        (Queued, InProgress),
        (Queued, Cancelled),
        (Queued, Failed),
        (InProgress, Completed),
        (InProgress, Incomplete),
        (InProgress, Failed),
        (InProgress, Cancelled),
        (InProgress, RequiresAction),
    ];
    for from in ALL_STATUSES {
        for to in ALL_STATUSES {
            assert_eq!(
                from.can_transition_to(to),
                allowed.contains(&(from, to)),
                "{from:?} -> {to:?}"
            );
        }
    }
}

#[test]
fn terminal_statuses_have_no_outgoing_transitions() {
    for from in ALL_STATUSES.into_iter().filter(|s| s.is_terminal()) {
        for to in ALL_STATUSES {
            assert!(!from.can_transition_to(to), "{from:?} -> {to:?}");
        }
    }
    // requires_action in particular: a new response continues the work.
    assert!(ALL_STATUSES
        .iter()
        .all(|&to| !ResponseStatus::RequiresAction.can_transition_to(to)));
    // No self-loops and nothing goes back to queued.
    for s in ALL_STATUSES {
        assert!(!s.can_transition_to(s), "{s:?}");
        assert!(!s.can_transition_to(ResponseStatus::Queued), "{s:?}");
    }
}

#[test]
fn status_wire_names() {
    for s in ALL_STATUSES {
        assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        assert_eq!(parse::<ResponseStatus>(json!(s.as_str())).unwrap(), s);
    }
    assert_eq!(ResponseStatus::RequiresAction.as_str(), "requires_action");
    assert_eq!(ResponseStatus::Cancelled.as_str(), "cancelled");
    assert_eq!(ResponseStatus::InProgress.as_str(), "in_progress");
    assert!(parse::<ResponseStatus>(json!("canceled")).is_err());
}

// ---------------------------------------------------------------- usage ----

#[test]
fn usage_add_sums_everything() {
    let mut a = Usage {
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
        input_tokens_details: InputTokensDetails { cached_tokens: 3 },
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: 2,
        },
    };
    let b = Usage {
        input_tokens: 100,
        output_tokens: 50,
        total_tokens: 150,
        input_tokens_details: InputTokensDetails { cached_tokens: 30 },
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: 20,
        },
    };
    a.add(&b);
    assert_eq!(
        a,
        Usage {
            input_tokens: 110,
            output_tokens: 55,
            total_tokens: 165,
            input_tokens_details: InputTokensDetails { cached_tokens: 33 },
            output_tokens_details: OutputTokensDetails {
                reasoning_tokens: 22,
            },
        }
    );
    // Adding zero changes nothing.
    let before = a;
    a.add(&Usage::default());
    assert_eq!(a, before);
}

#[test]
fn usage_details_default_when_omitted() {
    let u: Usage =
        parse(json!({"input_tokens": 1, "output_tokens": 2, "total_tokens": 3})).unwrap();
    assert_eq!(u.input_tokens_details.cached_tokens, 0);
    assert_eq!(u.output_tokens_details.reasoning_tokens, 0);
    let v = serde_json::to_value(u).unwrap();
    assert_eq!(v["input_tokens_details"], json!({"cached_tokens": 0}));
    assert_eq!(v["output_tokens_details"], json!({"reasoning_tokens": 0}));
}

// ------------------------------------------------------------------ ids ----

#[test]
fn new_id_has_prefix_and_48_hex_digits() {
    for p in [
        prefix::RESPONSE,
        prefix::MESSAGE,
        prefix::FUNCTION_CALL,
        prefix::FUNCTION_CALL_OUTPUT,
        prefix::REASONING,
        prefix::CALL,
        prefix::MCP_LIST_TOOLS,
        prefix::MCP_CALL,
        prefix::MCP_APPROVAL_REQUEST,
        prefix::MCP_APPROVAL_RESPONSE,
    ] {
        let id = new_id(p);
        assert_eq!(id.len(), p.len() + 1 + 48, "{id}");
        let rest = id
            .strip_prefix(p)
            .and_then(|r| r.strip_prefix('_'))
            .unwrap_or_else(|| panic!("{id} does not start with {p}_"));
        assert_eq!(rest.len(), 48);
        assert!(
            rest.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{id}"
        );
    }
    assert_eq!(prefix::RESPONSE, "resp");
    assert_eq!(prefix::MESSAGE, "msg");
    assert_eq!(prefix::FUNCTION_CALL, "fc");
}

/// The first 16 digits are the creation time in microseconds, so ids made
/// later sort later (stores append them at the end of their indexes).
#[test]
fn new_ids_start_with_their_creation_time() {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64
    };
    let time_of = |id: &str| u64::from_str_radix(&id["resp_".len()..][..16], 16).unwrap();
    let before = now();
    let first = new_id(prefix::RESPONSE);
    std::thread::sleep(std::time::Duration::from_millis(2));
    let second = new_id(prefix::RESPONSE);
    let after = now();
    assert!(first < second, "{first} then {second}");
    assert!((before..=after).contains(&time_of(&first)), "{first}");
    assert!((before..=after).contains(&time_of(&second)), "{second}");
    // The rest stays random: two ids of the same microsecond still differ.
    assert_ne!(first["resp_".len() + 16..], second["resp_".len() + 16..]);
}

#[test]
fn new_ids_are_distinct() {
    let ids: std::collections::HashSet<String> =
        (0..1000).map(|_| new_id(prefix::RESPONSE)).collect();
    assert_eq!(ids.len(), 1000);
}

/// What Codex and other current OpenAI clients send: namespace and custom
/// tools, hosted tools, custom tool call items, `client_metadata`.
#[test]
fn current_openai_client_shapes_parse_and_round_trip() {
    use windlass_protocol::{CustomToolFormat, NamespacedTool};
    let req: CreateResponseRequest = serde_json::from_value(serde_json::json!({
        "model": "m",
        "input": [
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
            {"type": "function_call", "call_id": "c2", "name": "spawn", "namespace": "agents", "arguments": "{}"}
        ],
        "tools": [
            {"type": "namespace", "name": "agents", "description": "Sub-agents", "tools": [
                {"type": "function", "name": "spawn", "parameters": {"type": "object"}, "strict": false},
                {"type": "custom", "name": "note"}
            ]},
            {"type": "custom", "name": "apply_patch",
             "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
            {"type": "web_search", "external_web_access": false}
        ],
        "client_metadata": {"session_id": "s"}
    }))
    .unwrap();
    assert!(req.extra.is_empty());
    assert_eq!(req.client_metadata.as_ref().unwrap()["session_id"], "s");
    let tools = req.tools.clone().unwrap();
    match &tools[0] {
        Tool::Namespace(ns) => {
            assert_eq!(ns.name, "agents");
            assert!(matches!(&ns.tools[0], NamespacedTool::Function(f) if f.name == "spawn"));
            assert!(matches!(&ns.tools[1], NamespacedTool::Custom(c) if c.name == "note"));
        }
        other => panic!("{other:?}"),
    }
    match &tools[1] {
        Tool::Custom(c) => assert_eq!(
            c.format,
            Some(CustomToolFormat::Grammar {
                syntax: "lark".into(),
                definition: "start: x".into()
            })
        ),
        other => panic!("{other:?}"),
    }
    assert!(tools[2].is_hosted() && tools[2].type_name() == "web_search");
    let Some(Input::Items(items)) = &req.input else {
        panic!("items")
    };
    assert!(matches!(&items[0], Item::CustomToolCall(c) if c.input == "*** Begin"));
    assert!(matches!(&items[1], Item::CustomToolCallOutput(o) if o.call_id == "c1"));
    assert!(matches!(&items[2], Item::FunctionCall(f) if f.namespace.as_deref() == Some("agents")));
    // Serialized and parsed again, nothing changes.
    let back: CreateResponseRequest =
        serde_json::from_value(serde_json::to_value(&req).unwrap()).unwrap();
    assert_eq!(back, req);
}

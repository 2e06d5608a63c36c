use serde_json::{json, Value};
use windlass_engine::{ModelRequest, ProviderError};
use windlass_protocol::{
    ContentPart, FilePart, FunctionCall, FunctionCallOutput, ImageDetail, ImagePart, Item,
    ItemReference, Message, MessageContent, Reasoning, RefusalPart, Role, ToolOutput, VideoPart,
};

use crate::encode::encode_request;
use crate::MaxTokensField;

/// The whole request body: messages are checked in their real context.
fn encode(req: &ModelRequest) -> Value {
    let body = encode_request(req, MaxTokensField::MaxTokens).expect("encodes");
    serde_json::to_value(&body).expect("to value")
}

fn unsupported(req: &ModelRequest) -> (String, Option<String>) {
    match encode_request(req, MaxTokensField::MaxTokens) {
        Err(ProviderError::Unsupported { message, param }) => (message, param),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

fn req(transcript: Vec<Item>) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        transcript: transcript.into(),
        ..ModelRequest::default()
    }
}

fn msg(role: Role, content: MessageContent) -> Item {
    Item::Message(Message {
        id: None,
        role,
        content,
        status: None,
        phase: None,
    })
}

fn text(role: Role, t: &str) -> Item {
    msg(role, MessageContent::Text(t.into()))
}

fn parts(role: Role, parts: Vec<ContentPart>) -> Item {
    msg(role, MessageContent::Parts(parts))
}

fn call(id: &str, name: &str, args: &str) -> Item {
    Item::FunctionCall(FunctionCall {
        id: Some(format!("fc_{id}")),
        call_id: id.into(),
        name: name.into(),
        arguments: args.into(),
        namespace: None,
        status: None,
    })
}

fn output(id: &str, out: ToolOutput) -> Item {
    Item::FunctionCallOutput(FunctionCallOutput {
        id: None,
        call_id: id.into(),
        output: out,
        status: None,
        is_error: None,
    })
}

fn image(url: Option<&str>, file_id: Option<&str>, detail: Option<ImageDetail>) -> ContentPart {
    ContentPart::InputImage(ImagePart {
        image_url: url.map(Into::into),
        file_id: file_id.map(Into::into),
        detail,
    })
}

fn file(data: Option<&str>, url: Option<&str>) -> ContentPart {
    ContentPart::InputFile(FilePart {
        filename: Some("a.pdf".into()),
        file_data: data.map(Into::into),
        file_url: url.map(Into::into),
        file_id: None,
    })
}

#[test]
fn instructions_come_first_as_system() {
    let mut r = req(vec![Item::user_text("hi")]);
    r.instructions = Some("be brief".into());
    assert_eq!(
        encode(&r)["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
}

#[test]
fn roles_map_and_developer_becomes_system() {
    let r = req(vec![
        text(Role::System, "s"),
        text(Role::Developer, "d"),
        text(Role::User, "u"),
        text(Role::Assistant, "a"),
    ]);
    let roles: Vec<Value> = encode(&r)["messages"]
        .as_array()
        .expect("array")
        .iter()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(roles, vec!["system", "system", "user", "assistant"]);
}

#[test]
fn text_parts_are_joined_into_a_string() {
    let r = req(vec![
        parts(
            Role::User,
            vec![ContentPart::input_text("a"), ContentPart::input_text("b")],
        ),
        parts(
            Role::Assistant,
            vec![
                ContentPart::output_text("c"),
                ContentPart::Refusal(RefusalPart {
                    refusal: "no".into(),
                }),
            ],
        ),
        parts(Role::User, vec![]),
    ]);
    assert_eq!(
        encode(&r)["messages"],
        json!([
            {"role": "user", "content": "ab"},
            {"role": "assistant", "content": "cno"},
            {"role": "user", "content": ""}
        ])
    );
}

#[test]
fn mixed_text_and_image_is_an_array() {
    let r = req(vec![parts(
        Role::User,
        vec![
            ContentPart::input_text("what is this?"),
            image(Some("https://x/y.png"), None, Some(ImageDetail::High)),
            image(Some("data:image/png;base64,AA"), None, None),
            file(Some("data:application/pdf;base64,AA"), None),
        ],
    )]);
    assert_eq!(
        encode(&r)["messages"][0]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,AA"}}
        ])
    );
}

#[test]
fn unsupported_content_parts() {
    let cases = [
        image(None, Some("file_1"), None),
        file(None, Some("https://x/a.pdf")),
        ContentPart::InputVideo(VideoPart {
            video_url: "https://x/v.mp4".into(),
        }),
    ];
    for part in cases {
        let kind = part.type_name().to_owned();
        let (message, param) = unsupported(&req(vec![parts(
            Role::User,
            vec![ContentPart::input_text("x"), part],
        )]));
        assert_eq!(param.as_deref(), Some("input"), "{kind}");
        assert!(message.contains(&kind), "{kind}: {message}");
    }
}

#[test]
fn assistant_text_and_consecutive_calls_merge_into_one_message() {
    let r = req(vec![
        Item::user_text("weather?"),
        text(Role::Assistant, "Let me check."),
        call("c1", "weather", r#"{"city":"Paris"}"#),
        call("c2", "time", "{}"),
        output("c1", ToolOutput::Text("sunny".into())),
        output("c2", ToolOutput::Text("noon".into())),
    ]);
    assert_eq!(
        encode(&r)["messages"],
        json!([
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "c2", "content": "noon"}
        ])
    );
}

#[test]
fn calls_without_text_get_empty_string_content() {
    let r = req(vec![
        Item::user_text("go"),
        Item::Reasoning(Reasoning {
            id: None,
            summary: vec![],
            content: Some(vec![ContentPart::input_text("thinking")]),
            encrypted_content: None,
            status: None,
        }),
        call("c1", "a", "{}"),
        output("c1", ToolOutput::Text("1".into())),
        call("c2", "b", "{}"),
    ]);
    let v = encode(&r);
    let msgs = v["messages"].as_array().expect("array");
    assert_eq!(msgs.len(), 4, "reasoning is not sent: {msgs:?}");
    assert_eq!(msgs[1]["content"], json!(""));
    assert_eq!(msgs[1]["tool_calls"].as_array().map(Vec::len), Some(1));
    assert_eq!(msgs[3]["role"], "assistant");
    assert_eq!(msgs[3]["content"], json!(""));
    assert_eq!(msgs[3]["tool_calls"][0]["id"], "c2");
}

#[test]
fn reasoning_between_text_and_calls_does_not_split_the_assistant_turn() {
    let thought = || {
        Item::Reasoning(Reasoning {
            id: None,
            summary: vec![],
            content: None,
            encrypted_content: None,
            status: None,
        })
    };
    let r = req(vec![
        Item::user_text("go"),
        thought(),
        text(Role::Assistant, "Sure."),
        thought(),
        call("c1", "a", "{}"),
        thought(),
        call("c2", "b", "{}"),
    ]);
    let v = encode(&r);
    let msgs = v["messages"].as_array().expect("array");
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[1]["content"], "Sure.");
    assert_eq!(msgs[1]["tool_calls"].as_array().map(Vec::len), Some(2));
}

#[test]
fn calls_after_a_user_message_do_not_merge_into_it() {
    let r = req(vec![Item::user_text("go"), call("c1", "a", "{}")]);
    let v = encode(&r);
    assert_eq!(v["messages"][0], json!({"role": "user", "content": "go"}));
    assert_eq!(v["messages"][1]["role"], "assistant");
}

#[test]
fn assistant_message_after_calls_is_separate() {
    let r = req(vec![call("c1", "a", "{}"), text(Role::Assistant, "done")]);
    let v = encode(&r);
    assert_eq!(v["messages"].as_array().map(Vec::len), Some(2));
    assert!(v["messages"][1].get("tool_calls").is_none());
}

#[test]
fn tool_output_parts() {
    let r = req(vec![output(
        "c1",
        ToolOutput::Parts(vec![
            ContentPart::input_text("a"),
            ContentPart::output_text("b"),
        ]),
    )]);
    assert_eq!(
        encode(&r)["messages"][0],
        json!({"role": "tool", "tool_call_id": "c1", "content": "ab"})
    );
    let bad = req(vec![output(
        "c1",
        ToolOutput::Parts(vec![image(Some("https://x"), None, None)]),
    )]);
    let (message, param) = unsupported(&bad);
    assert!(message.contains("input_image"), "{message}");
    assert_eq!(param.as_deref(), Some("input"));
}

#[test]
fn items_the_engine_should_have_resolved_are_unsupported() {
    let unknown: Item = serde_json::from_value(json!({"type": "tool_search_call", "id": "w"}))
        .expect("unknown item");
    let mcp: Item = serde_json::from_value(json!({
        "type": "mcp_approval_response", "approval_request_id": "a", "approve": true
    }))
    .expect("mcp item");
    for item in [
        unknown,
        mcp,
        Item::ItemReference(ItemReference { id: "msg_1".into() }),
    ] {
        let kind = item.type_name().to_owned();
        let (message, param) = unsupported(&req(vec![item]));
        assert!(message.contains(&kind), "{kind}: {message}");
        assert_eq!(param.as_deref(), Some("input"));
    }
}

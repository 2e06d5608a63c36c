use serde_json::{json, Map, Value};

use super::*;
use crate::content::ImagePart;
use crate::items::Message;

fn vars(v: Value) -> Map<String, Value> {
    v.as_object().expect("object").clone()
}

fn template() -> PromptTemplate {
    PromptTemplate {
        instructions: Some("You help {{ customer }} with {{product}}.".into()),
        input: serde_json::from_value(json!([
            {"role": "user", "content": "Hello, I am {{customer}}."},
            {"role": "user", "content": [{"type": "input_text", "text": "Look: {{photo}} thanks"}]},
        ]))
        .expect("items"),
    }
}

#[test]
fn placeholders_are_found_everywhere_once() {
    let names: Vec<String> = placeholders(&template()).into_iter().collect();
    assert_eq!(names, ["customer", "photo", "product"]);
}

#[test]
fn text_and_image_variables_fill_in() {
    let out = expand(
        &template(),
        &vars(json!({
            "customer": "Ada",
            "product": {"type": "input_text", "text": "looms"},
            "photo": {"type": "input_image", "image_url": "https://example.com/a.png"},
        })),
    )
    .expect("expands");
    assert_eq!(
        out.instructions.as_deref(),
        Some("You help Ada with looms.")
    );
    let expected: Vec<Item> = serde_json::from_value(json!([
        {"role": "user", "content": "Hello, I am Ada."},
        {"role": "user", "content": [
            {"type": "input_text", "text": "Look: "},
            {"type": "input_image", "image_url": "https://example.com/a.png"},
            {"type": "input_text", "text": " thanks"},
        ]},
    ]))
    .expect("items");
    assert_eq!(out.input, expected);
}

#[test]
fn an_image_in_a_plain_text_message_makes_it_parts() {
    let t = PromptTemplate {
        instructions: None,
        input: vec![Item::user_text("{{doc}}")],
    };
    let out = expand(
        &t,
        &vars(json!({"doc": {"type": "input_file", "file_id": "file-1"}})),
    )
    .expect("expands");
    let Item::Message(Message {
        content: MessageContent::Parts(parts),
        ..
    }) = &out.input[0]
    else {
        panic!("{:?}", out.input);
    };
    assert_eq!(parts.len(), 1);
    assert!(
        matches!(&parts[0], ContentPart::InputFile(f) if f.file_id.as_deref() == Some("file-1"))
    );
}

#[test]
fn every_error_names_its_variable() {
    let all = json!({"customer": "Ada", "product": "x", "photo": "y"});
    let mut missing = vars(all.clone());
    missing.remove("product");
    assert_eq!(
        expand(&template(), &missing),
        Err(PromptError::Missing("product".into()))
    );
    let mut unknown = vars(all.clone());
    unknown.insert("colour".into(), json!("red"));
    assert_eq!(
        expand(&template(), &unknown),
        Err(PromptError::Unknown("colour".into()))
    );
    let mut invalid = vars(all.clone());
    invalid.insert("product".into(), json!(42));
    assert_eq!(
        expand(&template(), &invalid),
        Err(PromptError::InvalidValue("product".into()))
    );
    let mut image_in_instructions = vars(all);
    image_in_instructions.insert(
        "product".into(),
        serde_json::to_value(ContentPart::InputImage(ImagePart {
            image_url: Some("https://example.com/p.png".into()),
            file_id: None,
            detail: None,
        }))
        .expect("json"),
    );
    let err = expand(&template(), &image_in_instructions).expect_err("refused");
    assert_eq!(err, PromptError::NotText("product".into()));
    assert!(err.to_string().contains("'product'"), "{err}");
}

#[test]
fn braces_that_are_no_placeholder_stay_text() {
    let t = PromptTemplate {
        instructions: Some("JSON like {{\"a\": 1}} and {{ }} and {{x}}".into()),
        input: Vec::new(),
    };
    assert_eq!(placeholders(&t).into_iter().collect::<Vec<_>>(), ["x"]);
    let out = expand(&t, &vars(json!({"x": "X"}))).expect("expands");
    assert_eq!(
        out.instructions.as_deref(),
        Some("JSON like {{\"a\": 1}} and {{ }} and X")
    );
}

#[test]
fn values_are_not_scanned_again() {
    let t = PromptTemplate {
        instructions: Some("{{a}}".into()),
        input: Vec::new(),
    };
    let out = expand(&t, &vars(json!({"a": "{{b}}"}))).expect("expands");
    assert_eq!(out.instructions.as_deref(), Some("{{b}}"));
}

#[test]
fn a_version_lists_its_variables_and_round_trips() {
    let v = crate::prompts::PromptVersion::new("pmpt_1", 2, 7, template());
    assert_eq!(v.version, "2");
    assert_eq!(v.variables, ["customer", "photo", "product"]);
    let json = serde_json::to_value(&v).expect("json");
    assert_eq!(json["object"], "prompt.version");
    assert_eq!(
        json["instructions"],
        "You help {{ customer }} with {{product}}."
    );
    let back: crate::prompts::PromptVersion = serde_json::from_value(json).expect("parses");
    assert_eq!(back, v);
}

#[test]
fn the_prompt_param_refuses_unknown_keys() {
    let ok: crate::prompts::PromptParam =
        serde_json::from_value(json!({"id": "pmpt_1", "version": "2", "variables": {"a": "b"}}))
            .expect("parses");
    assert_eq!(ok.version.as_deref(), Some("2"));
    assert!(
        serde_json::from_value::<crate::prompts::PromptParam>(json!({"id": "p", "vars": {}}))
            .is_err()
    );
}

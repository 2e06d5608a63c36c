//! The client's answers to calls: which call each output item answers, and
//! the typed `*_output` items as the function output the model sees.

use windlass_protocol::{
    ApplyPatchOutputStatus, ComputerCallOutput, ContentPart, FunctionCallOutput, ImagePart, Item,
    ShellCallOutput, ShellOutcome, ToolOutput,
};

/// The `call_id` an output item answers; `None` for items that are not
/// outputs of a client call.
pub fn answered_call(item: &Item) -> Option<&str> {
    match item {
        Item::FunctionCallOutput(o) => Some(&o.call_id),
        Item::CustomToolCallOutput(o) => Some(&o.call_id),
        Item::ShellCallOutput(o) => Some(&o.call_id),
        Item::LocalShellCallOutput(o) => o.answered_call(),
        Item::ApplyPatchCallOutput(o) => Some(&o.call_id),
        Item::ComputerCallOutput(o) => Some(&o.call_id),
        _ => None,
    }
}

/// A typed output item as the function output the upstream sees; `None`
/// for other items.
pub fn upstream_output(item: &Item) -> Option<FunctionCallOutput> {
    let (call_id, output, is_error, status) = match item {
        Item::ShellCallOutput(o) => (
            o.call_id.clone(),
            ToolOutput::Text(shell_text(o)),
            None,
            o.status,
        ),
        Item::LocalShellCallOutput(o) => (
            o.answered_call()?.to_owned(),
            ToolOutput::Text(o.output.clone()),
            None,
            o.status,
        ),
        Item::ApplyPatchCallOutput(o) => {
            let failed = o.status == ApplyPatchOutputStatus::Failed;
            let text = match (&o.output, failed) {
                (Some(log), false) => log.clone(),
                (None, false) => "Done.".to_owned(),
                (Some(log), true) if log.starts_with("Error") => log.clone(),
                (Some(log), true) => format!("Error: {log}"),
                (None, true) => "Error: the patch was not applied.".to_owned(),
            };
            (
                o.call_id.clone(),
                ToolOutput::Text(text),
                failed.then_some(true),
                None,
            )
        }
        Item::ComputerCallOutput(o) => (o.call_id.clone(), screenshot(o), None, None),
        _ => return None,
    };
    Some(FunctionCallOutput {
        id: None,
        call_id,
        output,
        status,
        is_error,
    })
}

/// Each command's outcome, stdout and stderr, in order.
fn shell_text(o: &ShellCallOutput) -> String {
    let many = o.output.len() > 1;
    let mut text = String::new();
    for (i, chunk) in o.output.iter().enumerate() {
        if !text.is_empty() {
            text.push('\n');
        }
        if many {
            text.push_str(&format!("[command {}] ", i + 1));
        }
        match chunk.outcome {
            ShellOutcome::Exit { exit_code } => text.push_str(&format!("exit code {exit_code}\n")),
            ShellOutcome::Timeout => text.push_str("timed out\n"),
        }
        if !chunk.stdout.is_empty() {
            text.push_str(&format!("stdout:\n{}\n", chunk.stdout.trim_end()));
        }
        if !chunk.stderr.is_empty() {
            text.push_str(&format!("stderr:\n{}\n", chunk.stderr.trim_end()));
        }
    }
    if text.is_empty() {
        text.push_str("(no commands ran)");
    }
    text
}

/// The screenshot as an image part (an upstream that cannot take images in
/// a tool result refuses the request before it runs).
fn screenshot(o: &ComputerCallOutput) -> ToolOutput {
    ToolOutput::Parts(vec![ContentPart::InputImage(ImagePart {
        image_url: o.output.image_url.clone(),
        file_id: o.output.file_id.clone(),
        detail: None,
    })])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(v: serde_json::Value) -> Item {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn shell_output_lists_every_command() {
        let o = item(
            json!({"type": "shell_call_output", "call_id": "c1", "output": [
                {"stdout": "a\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
                {"stdout": "", "stderr": "boom", "outcome": {"type": "timeout"}}
            ]}),
        );
        let out = upstream_output(&o).unwrap();
        assert_eq!(out.call_id, "c1");
        assert_eq!(
            out.output,
            ToolOutput::Text(
                "[command 1] exit code 0\nstdout:\na\n\n[command 2] timed out\nstderr:\nboom\n"
                    .into()
            )
        );
    }

    #[test]
    fn local_shell_output_is_named_by_id_or_call_id() {
        let by_id = item(json!({"type": "local_shell_call_output", "id": "c2", "output": "{}"}));
        assert_eq!(answered_call(&by_id), Some("c2"));
        let out = upstream_output(&by_id).unwrap();
        assert_eq!(
            (out.call_id.as_str(), out.output),
            ("c2", ToolOutput::Text("{}".into()))
        );
        let by_call =
            item(json!({"type": "local_shell_call_output", "call_id": "c3", "output": "x"}));
        assert_eq!(answered_call(&by_call), Some("c3"));
    }

    #[test]
    fn a_failed_patch_is_an_error_for_the_model() {
        let o = item(json!({"type": "apply_patch_call_output", "call_id": "c4",
                            "status": "failed", "output": "context not found"}));
        let out = upstream_output(&o).unwrap();
        assert_eq!(out.is_error, Some(true));
        assert_eq!(
            out.output,
            ToolOutput::Text("Error: context not found".into())
        );
    }

    #[test]
    fn a_screenshot_is_an_image_part() {
        let o = item(json!({"type": "computer_call_output", "call_id": "c5",
                            "output": {"type": "computer_screenshot",
                                       "image_url": "data:image/png;base64,AAAA"}}));
        let out = upstream_output(&o).unwrap();
        match out.output {
            ToolOutput::Parts(parts) => assert!(matches!(&parts[0],
                ContentPart::InputImage(i) if i.image_url.as_deref() == Some("data:image/png;base64,AAAA"))),
            other => panic!("{other:?}"),
        }
    }
}

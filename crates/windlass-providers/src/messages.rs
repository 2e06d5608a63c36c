//! The transcript -> chat completions `messages`.
//!
//! Chat completions has no items: function calls live inside an assistant
//! message and outputs are `tool` messages, so items are regrouped here.

use std::borrow::Cow;

use serde::Serialize;
use windlass_engine::{ProviderError, Transcript};
use windlass_protocol::{
    ContentPart, FunctionCall, FunctionCallOutput, ImageDetail, Item, Message, MessageContent,
    Role, ToolOutput,
};

use crate::encode::unsupported;

#[derive(Debug, Serialize)]
pub(crate) struct ChatMessage<'a> {
    role: &'static str,
    /// Always present: real servers reject `null` content next to tool calls.
    content: ChatContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ChatToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ChatContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<ChatPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ChatPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
    File { file: FileData<'a> },
}

#[derive(Debug, Serialize)]
struct ImageUrl<'a> {
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<ImageDetail>,
}

#[derive(Debug, Serialize)]
struct FileData<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<&'a str>,
    file_data: &'a str,
}

#[derive(Debug, Serialize)]
struct ChatToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Debug, Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

pub(crate) fn encode_messages<'a>(
    instructions: Option<&'a str>,
    transcript: &'a Transcript,
) -> Result<Vec<ChatMessage<'a>>, ProviderError> {
    let mut messages = Vec::with_capacity(transcript.len() + 1);
    if let Some(text) = instructions {
        messages.push(plain("system", Cow::Borrowed(text)));
    }
    // Whether the last message may absorb the next function call: true right
    // after an assistant message or a function call, because chat completions
    // wants one assistant message holding the text and all parallel calls.
    let mut open_assistant = false;
    for item in transcript {
        match item {
            Item::Message(m) => {
                messages.push(encode_message(m)?);
                open_assistant = m.role == Role::Assistant;
            }
            Item::FunctionCall(call) => {
                let wire = encode_call(call);
                match messages.last_mut() {
                    Some(last) if open_assistant => last.tool_calls.push(wire),
                    _ => {
                        let mut msg = plain("assistant", Cow::Borrowed(""));
                        msg.tool_calls.push(wire);
                        messages.push(msg);
                    }
                }
                open_assistant = true;
            }
            Item::FunctionCallOutput(out) => {
                messages.push(encode_output(out)?);
                open_assistant = false;
            }
            // No input form exists for reasoning; skipping it must not split
            // the assistant turn it belongs to, so `open_assistant` is kept.
            Item::Reasoning(_) => {}
            other => {
                return Err(unsupported(
                    format!(
                        "items of type `{}` cannot be sent to a chat completions upstream",
                        other.type_name()
                    ),
                    "input",
                ))
            }
        }
    }
    Ok(messages)
}

pub(crate) fn plain<'a>(role: &'static str, text: Cow<'a, str>) -> ChatMessage<'a> {
    ChatMessage {
        role,
        content: ChatContent::Text(text),
        tool_calls: Vec::new(),
        tool_call_id: None,
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        // Many servers (and chat templates) reject "developer".
        Role::System | Role::Developer => "system",
    }
}

fn encode_message(m: &Message) -> Result<ChatMessage<'_>, ProviderError> {
    let content = match &m.content {
        MessageContent::Text(t) => ChatContent::Text(Cow::Borrowed(t)),
        MessageContent::Parts(parts) => encode_parts(parts)?,
    };
    Ok(ChatMessage {
        content,
        ..plain(role_name(m.role), Cow::Borrowed(""))
    })
}

/// Text-only content becomes one string: older servers and many chat
/// templates accept nothing else.
fn encode_parts(parts: &[ContentPart]) -> Result<ChatContent<'_>, ProviderError> {
    if parts.iter().all(|p| p.text().is_some()) {
        return Ok(ChatContent::Text(join_text(parts)));
    }
    parts
        .iter()
        .map(encode_part)
        .collect::<Result<_, _>>()
        .map(ChatContent::Parts)
}

fn join_text(parts: &[ContentPart]) -> Cow<'_, str> {
    match parts {
        [] => Cow::Borrowed(""),
        [one] => Cow::Borrowed(one.text().unwrap_or_default()),
        many => Cow::Owned(many.iter().filter_map(ContentPart::text).collect()),
    }
}

fn encode_part(part: &ContentPart) -> Result<ChatPart<'_>, ProviderError> {
    if let Some(text) = part.text() {
        return Ok(ChatPart::Text { text });
    }
    match part {
        ContentPart::InputImage(img) => match &img.image_url {
            Some(url) => Ok(ChatPart::ImageUrl {
                image_url: ImageUrl {
                    url,
                    detail: img.detail,
                },
            }),
            None => Err(unsupported(
                "input_image by file_id is not supported by this upstream; send image_url",
                "input",
            )),
        },
        ContentPart::InputFile(file) => match &file.file_data {
            Some(data) => Ok(ChatPart::File {
                file: FileData {
                    filename: file.filename.as_deref(),
                    file_data: data,
                },
            }),
            None => Err(unsupported(
                "input_file is supported only with inline file_data by this upstream",
                "input",
            )),
        },
        other => Err(unsupported(
            format!(
                "content of type `{}` is not supported by this upstream",
                other.type_name()
            ),
            "input",
        )),
    }
}

fn encode_call(call: &FunctionCall) -> ChatToolCall<'_> {
    ChatToolCall {
        id: &call.call_id,
        kind: "function",
        function: CallFunction {
            name: &call.name,
            arguments: &call.arguments,
        },
    }
}

fn encode_output(out: &FunctionCallOutput) -> Result<ChatMessage<'_>, ProviderError> {
    let text = match &out.output {
        ToolOutput::Text(t) => Cow::Borrowed(t.as_str()),
        ToolOutput::Parts(parts) => {
            if let Some(bad) = parts.iter().find(|p| p.text().is_none()) {
                return Err(unsupported(
                    format!(
                        "function_call_output content of type `{}` is not supported by this upstream",
                        bad.type_name()
                    ),
                    "input",
                ));
            }
            join_text(parts)
        }
    };
    Ok(ChatMessage {
        tool_call_id: Some(&out.call_id),
        ..plain("tool", text)
    })
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;

//! MCP tool results to text, without loss.
//!
//! The engine feeds tool output back to the model as text, so every content
//! part has to survive as text: text parts verbatim, binary parts as data
//! URLs, resources with their URI, and `structuredContent` as JSON unless
//! the text already says exactly the same thing.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;
use windlass_engine::ToolResult;
use windlass_protocol::ToolOutput;

/// Converts a `tools/call` result; `isError: true` becomes `is_error`.
pub fn to_tool_result(result: &CallToolResult) -> ToolResult {
    ToolResult {
        output: ToolOutput::Text(result_text(result)),
        is_error: result.is_error == Some(true),
        item: None,
    }
}

/// The text of a result: parts joined with `\n`, then the structured
/// content if it adds anything.
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result.content.iter().map(part_text).collect();
    if let Some(structured) = &result.structured_content {
        if !structured.is_null() && !already_in_text(structured, &result.content) {
            parts.push(structured.to_string());
        }
    }
    parts.join("\n")
}

/// Servers usually mirror `structuredContent` in a text part (often
/// pretty-printed), so compare as JSON, not as bytes.
fn already_in_text(structured: &Value, content: &[ContentBlock]) -> bool {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    // The Python SDK wraps a plain return value as `{"result": value}`
    // and puts the bare value in the text; that mirror adds nothing either.
    let wrapped = match structured {
        Value::Object(map) if map.len() == 1 => map.get("result"),
        _ => None,
    };
    let same = |text: &str| {
        let parsed = serde_json::from_str::<Value>(text).ok();
        parsed.as_ref() == Some(structured)
            || wrapped.is_some_and(|w| parsed.as_ref() == Some(w) || w.as_str() == Some(text))
    };
    texts.iter().any(|t| same(t)) || (texts.len() > 1 && same(&texts.join("\n")))
}

fn data_url(mime: &str, base64: &str) -> String {
    format!("data:{mime};base64,{base64}")
}

fn part_text(part: &ContentBlock) -> String {
    match part {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!(
            "[image: {}, {}]",
            i.mime_type,
            data_url(&i.mime_type, &i.data)
        ),
        ContentBlock::Audio(a) => format!(
            "[audio: {}, {}]",
            a.mime_type,
            data_url(&a.mime_type, &a.data)
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                format!("[resource: {uri}, {}]", data_url(mime, blob))
            }
            // A resource shape newer than this SDK: keep its JSON.
            #[allow(unreachable_patterns)]
            other => serde_json::to_string(other).unwrap_or_default(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource: {}]", link.uri),
        // A content type newer than this SDK: keep its JSON rather than drop it.
        #[allow(unreachable_patterns)]
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).expect("CallToolResult")
    }

    #[test]
    fn text_parts_are_joined() {
        let r = result(json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "text", "text": "two"}
        ]}));
        let out = to_tool_result(&r);
        assert_eq!(out.output, ToolOutput::Text("one\ntwo".into()));
        assert!(!out.is_error);
    }

    #[test]
    fn error_flag_is_kept() {
        let r = result(json!({"content": [{"type": "text", "text": "boom"}], "isError": true}));
        let out = to_tool_result(&r);
        assert!(out.is_error);
        assert_eq!(out.output, ToolOutput::Text("boom".into()));
    }

    #[test]
    fn binary_parts_become_data_urls() {
        let r = result(json!({"content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
        ]}));
        assert_eq!(
            result_text(&r),
            "[image: image/png, data:image/png;base64,iVBORw0KGgo=]\n\
             [audio: audio/wav, data:audio/wav;base64,UklGRg==]"
        );
    }

    #[test]
    fn resources_keep_uri_and_body() {
        let r = result(json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello", "mimeType": "text/plain"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAE="}},
            {"type": "resource_link", "uri": "file:///c.md", "name": "c"}
        ]}));
        assert_eq!(
            result_text(&r),
            "[resource: file:///a.txt]\nhello\n\
             [resource: file:///b.bin, data:application/octet-stream;base64,AAE=]\n\
             [resource: file:///c.md]"
        );
    }

    #[test]
    fn structured_content_is_appended_unless_mirrored() {
        let mirrored = result(json!({
            "content": [{"type": "text", "text": "{\n  \"temp\": 20\n}"}],
            "structuredContent": {"temp": 20}
        }));
        assert_eq!(result_text(&mirrored), "{\n  \"temp\": 20\n}");

        let extra = result(json!({
            "content": [{"type": "text", "text": "It is warm."}],
            "structuredContent": {"temp": 20}
        }));
        assert_eq!(result_text(&extra), "It is warm.\n{\"temp\":20}");

        let wrapped = result(json!({
            "content": [{"type": "text", "text": "5"}],
            "structuredContent": {"result": 5}
        }));
        assert_eq!(result_text(&wrapped), "5");
        let wrapped_text = result(json!({
            "content": [{"type": "text", "text": "hi there"}],
            "structuredContent": {"result": "hi there"}
        }));
        assert_eq!(result_text(&wrapped_text), "hi there");
        let different = result(json!({
            "content": [{"type": "text", "text": "5"}],
            "structuredContent": {"result": 6}
        }));
        assert_eq!(result_text(&different), "5\n{\"result\":6}");

        let only = result(json!({"content": [], "structuredContent": {"a": [1, 2]}}));
        assert_eq!(result_text(&only), "{\"a\":[1,2]}");
    }

    #[test]
    fn empty_result_is_empty_text() {
        let r = result(json!({"content": []}));
        assert_eq!(result_text(&r), "");
    }
}

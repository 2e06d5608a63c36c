//! The scripted assistant: a default reply that answers from the request,
//! like a small obliging model, for suites that cannot script each turn
//! (the OpenResponses compliance suite, SDK walkthroughs).
//!
//! Rules, on a chat-completions request (first match wins):
//! * the last message is a tool result: say what the tool returned;
//! * tools are offered and the last user text names one (a word of its name
//!   or of its description, longer than three letters): call it, with every
//!   required argument filled (strings from the text after " in ", or
//!   "example"; numbers 2; booleans true);
//! * the system prompt asks for a summary ("compacting"): list the earlier
//!   user and assistant texts;
//! * it asks for "the code word": the last "code word: X" seen earlier;
//! * the user text says "reply with exactly: X": X;
//! * otherwise: "Hello! You said: <text>".

use serde_json::{json, Map, Value};

use crate::reply::{Reply, ToolCallSpec};

/// The reply the scripted assistant gives to `request`.
pub(crate) fn respond(request: &Value) -> Reply {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Some(last) = messages.last() else {
        return Reply::text("Hello!");
    };
    if role(last) == "tool" {
        return Reply::text(format!("The tool returned: {}", text_of(last)));
    }
    let said = text_of(last);
    if let Some(call) = tool_for(request, &said) {
        return Reply::tool_calls(vec![call]);
    }
    let system: String = messages
        .iter()
        .filter(|m| matches!(role(m), "system" | "developer"))
        .map(text_of)
        .collect();
    if system.contains("compacting") {
        return Reply::text(summary(messages));
    }
    Reply::text(answer(&said, messages))
}

fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// The text of a message: a string, or its text parts joined.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn tool_for(request: &Value, said: &str) -> Option<ToolCallSpec> {
    let said = said.to_lowercase();
    let tools = request.get("tools")?.as_array()?;
    tools.iter().find_map(|tool| {
        let f = tool.get("function")?;
        let name = f.get("name")?.as_str()?;
        let description = f.get("description").and_then(Value::as_str).unwrap_or("");
        let words = name.split(|c: char| !c.is_alphanumeric()).chain(
            description
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() > 5),
        );
        let named = words
            .map(str::to_lowercase)
            .any(|w| w.len() > 3 && said.contains(&w));
        named.then(|| {
            let args = arguments(f.get("parameters"), &said);
            ToolCallSpec::new(name, args.to_string())
        })
    })
}

fn arguments(schema: Option<&Value>, said: &str) -> Value {
    let mut args = Map::new();
    let Some(schema) = schema else {
        return Value::Object(args);
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let value = match kind {
            "number" | "integer" => json!(2),
            "boolean" => json!(true),
            _ => json!(place(said).unwrap_or_else(|| "example".to_owned())),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// "... in San Francisco?" -> "san francisco" (the text is lowercased).
fn place(said: &str) -> Option<String> {
    let after = said.rsplit_once(" in ")?.1;
    let place = after.trim_end_matches(['?', '.', '!']).trim();
    (!place.is_empty()).then(|| place.to_owned())
}

fn summary(messages: &[Value]) -> String {
    let lines: Vec<String> = messages
        .iter()
        .filter(|m| matches!(role(m), "user" | "assistant"))
        .map(|m| format!("{}: {}", role(m), text_of(m)))
        .collect();
    // The closing request of the compaction pass is not part of it.
    let kept = lines.len().saturating_sub(1);
    format!("Summary. {}", lines[..kept].join(" | "))
}

fn answer(said: &str, messages: &[Value]) -> String {
    let lower = said.to_lowercase();
    if lower.contains("code word") && lower.contains('?') {
        let earlier = messages[..messages.len().saturating_sub(1)].iter().rev();
        if let Some(word) = earlier.map(text_of).find_map(|t| code_word(&t)) {
            return word;
        }
    }
    let marker = "reply with exactly:";
    if let Some(at) = lower.find(marker) {
        // Offsets from the lowercased text; `get` stays safe if they moved.
        let rest = said.get(at + marker.len()..).unwrap_or_default().trim();
        return rest.trim_end_matches('.').to_owned();
    }
    format!("Hello! You said: {said}")
}

/// "Remember the code word: cobalt. Reply ..." -> "cobalt".
fn code_word(text: &str) -> Option<String> {
    let at = text.to_lowercase().rfind("code word: ")?;
    let word: String = text
        .get(at + "code word: ".len()..)?
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weather_request(last: Value) -> Value {
        json!({
            "messages": [last],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "parameters": {"type": "object",
                    "properties": {"location": {"type": "string"}},
                    "required": ["location"]}}}]
        })
    }

    #[test]
    fn it_calls_the_tool_the_user_asks_about_with_its_arguments() {
        let reply = respond(&weather_request(
            json!({"role": "user", "content": "What's the weather like in San Francisco?"}),
        ));
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].name, "get_weather");
        assert_eq!(
            reply.tool_calls[0].arguments,
            r#"{"location":"san francisco"}"#
        );
    }

    #[test]
    fn it_answers_a_tool_result_and_plain_questions_from_the_text() {
        let done = respond(&weather_request(
            json!({"role": "tool", "content": "sunny"}),
        ));
        assert!(done.tool_calls.is_empty());
        assert_eq!(done.content.as_deref(), Some("The tool returned: sunny"));
        let exact = respond(&json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "Reply with exactly: first"}]}]}));
        assert_eq!(exact.content.as_deref(), Some("first"));
        let recall = respond(&json!({"messages": [
            {"role": "user", "content": "Remember the code word: cobalt. Reply with OK."},
            {"role": "assistant", "content": "OK"},
            {"role": "user", "content": "What is the code word? Reply with only the code word."}]}));
        assert_eq!(recall.content.as_deref(), Some("cobalt"));
    }
}

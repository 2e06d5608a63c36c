//! A prompt template with its variables filled in: pure, no storage.
//!
//! Placeholders are `{{name}}` (spaces inside the braces allowed). A text
//! value replaces its placeholders wherever they are; an image or file value
//! can stand only in message content, where it splits the text part around
//! it. Every placeholder needs a value and every value a placeholder, or the
//! expansion fails naming the variable.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde_json::{Map, Value};

use crate::content::{ContentPart, TextPart};
use crate::items::{Item, MessageContent};
use crate::prompts::{PromptTemplate, PromptValue};

/// Why a template could not be filled in; each names the variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// The template uses it and no value was given.
    Missing(String),
    /// A value was given for a name the template does not use.
    Unknown(String),
    /// The value is neither a string nor an input text, image or file part.
    InvalidValue(String),
    /// An image or file where only text can go (the instructions, a
    /// function call's output).
    NotText(String),
}

impl PromptError {
    /// The name of the variable the error is about.
    pub fn variable(&self) -> &str {
        match self {
            PromptError::Missing(n)
            | PromptError::Unknown(n)
            | PromptError::InvalidValue(n)
            | PromptError::NotText(n) => n,
        }
    }
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PromptError::Missing(n) => {
                write!(f, "the prompt uses variable '{n}' but no value was given")
            }
            PromptError::Unknown(n) => write!(f, "the prompt has no variable '{n}'"),
            PromptError::InvalidValue(n) => write!(
                f,
                "variable '{n}' must be a string or an input_text, input_image or input_file part"
            ),
            PromptError::NotText(n) => write!(
                f,
                "variable '{n}' is an image or file, which can only stand in message content"
            ),
        }
    }
}

impl std::error::Error for PromptError {}

/// The instructions and input a template gives with its variables.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// The template's instructions with the variables filled in, if it has any.
    pub instructions: Option<String>,
    /// The template's `input` items with the variables filled in (they go
    /// before the request's own input).
    pub input: Vec<Item>,
}

/// Fills `template` in with `variables` (as the request sent them).
pub fn expand(
    template: &PromptTemplate,
    variables: &Map<String, Value>,
) -> Result<Expanded, PromptError> {
    let used = placeholders(template);
    let mut values = HashMap::with_capacity(variables.len());
    for (name, raw) in variables {
        if !used.contains(name) {
            return Err(PromptError::Unknown(name.clone()));
        }
        let value =
            PromptValue::from_json(raw).ok_or_else(|| PromptError::InvalidValue(name.clone()))?;
        values.insert(name.as_str(), value);
    }
    if let Some(missing) = used.iter().find(|n| !values.contains_key(n.as_str())) {
        return Err(PromptError::Missing(missing.clone()));
    }
    let instructions = template
        .instructions
        .as_deref()
        .map(|t| fill_text(t, &values))
        .transpose()?;
    let input = template
        .input
        .iter()
        .map(|item| fill_item(item, &values))
        .collect::<Result<_, _>>()?;
    Ok(Expanded {
        instructions,
        input,
    })
}

/// Every placeholder name in the template.
pub fn placeholders(template: &PromptTemplate) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut add = |text: &str| {
        for piece in pieces(text) {
            if let Piece::Var(name) = piece {
                names.insert(name.to_owned());
            }
        }
    };
    if let Some(i) = &template.instructions {
        add(i);
    }
    for item in &template.input {
        for text in item_texts(item) {
            add(text);
        }
    }
    names
}

type Values<'a> = HashMap<&'a str, PromptValue>;

fn fill_item(item: &Item, values: &Values<'_>) -> Result<Item, PromptError> {
    let mut item = item.clone();
    match &mut item {
        Item::Message(m) => {
            m.content = match &m.content {
                MessageContent::Text(t) => fill_content(t, values)?,
                MessageContent::Parts(parts) => {
                    let mut out = Vec::with_capacity(parts.len());
                    for part in parts {
                        match part {
                            ContentPart::InputText(t) => out.extend(fill_parts(&t.text, values)?),
                            other => out.push(fill_part_text(other, values)?),
                        }
                    }
                    MessageContent::Parts(out)
                }
            };
        }
        Item::FunctionCallOutput(o) => {
            if let crate::items::ToolOutput::Text(t) = &o.output {
                o.output = crate::items::ToolOutput::Text(fill_text(t, values)?);
            }
        }
        _ => {}
    }
    Ok(item)
}

/// A plain-text message body: stays a string unless an image or file
/// goes into it.
fn fill_content(text: &str, values: &Values<'_>) -> Result<MessageContent, PromptError> {
    match fill_text(text, values) {
        Ok(t) => Ok(MessageContent::Text(t)),
        Err(PromptError::NotText(_)) => Ok(MessageContent::Parts(fill_parts(text, values)?)),
        Err(e) => Err(e),
    }
}

/// An `input_text` part filled in: text parts around image and file parts.
fn fill_parts(text: &str, values: &Values<'_>) -> Result<Vec<ContentPart>, PromptError> {
    let mut parts = Vec::new();
    let mut current = String::new();
    for piece in pieces(text) {
        match piece {
            Piece::Text(t) => current.push_str(t),
            Piece::Var(name) => match values.get(name) {
                Some(PromptValue::Text(v)) => current.push_str(v),
                Some(PromptValue::Part(p)) => {
                    if !current.is_empty() {
                        parts.push(ContentPart::input_text(std::mem::take(&mut current)));
                    }
                    parts.push(p.clone());
                }
                None => return Err(PromptError::Missing(name.to_owned())),
            },
        }
    }
    if !current.is_empty() || parts.is_empty() {
        parts.push(ContentPart::input_text(current));
    }
    Ok(parts)
}

/// Another textual part (output text, a reasoning summary...): text only.
fn fill_part_text(part: &ContentPart, values: &Values<'_>) -> Result<ContentPart, PromptError> {
    let mut part = part.clone();
    match &mut part {
        ContentPart::Text(TextPart { text }) | ContentPart::SummaryText(TextPart { text }) => {
            *text = fill_text(text, values)?
        }
        ContentPart::OutputText(t) => t.text = fill_text(&t.text, values)?,
        _ => {}
    }
    Ok(part)
}

fn fill_text(text: &str, values: &Values<'_>) -> Result<String, PromptError> {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(name) => match values.get(name) {
                Some(PromptValue::Text(v)) => out.push_str(v),
                Some(PromptValue::Part(_)) => return Err(PromptError::NotText(name.to_owned())),
                None => return Err(PromptError::Missing(name.to_owned())),
            },
        }
    }
    Ok(out)
}

/// The texts of an item where placeholders may stand.
fn item_texts(item: &Item) -> Vec<&str> {
    match item {
        Item::Message(m) => match &m.content {
            MessageContent::Text(t) => vec![t.as_str()],
            MessageContent::Parts(parts) => parts.iter().filter_map(fillable_text).collect(),
        },
        Item::FunctionCallOutput(o) => match &o.output {
            crate::items::ToolOutput::Text(t) => vec![t.as_str()],
            crate::items::ToolOutput::Parts(_) => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The parts whose text is filled in ([`fill_parts`], [`fill_part_text`]).
fn fillable_text(part: &ContentPart) -> Option<&str> {
    match part {
        ContentPart::InputText(TextPart { text })
        | ContentPart::Text(TextPart { text })
        | ContentPart::SummaryText(TextPart { text }) => Some(text),
        ContentPart::OutputText(t) => Some(&t.text),
        _ => None,
    }
}

enum Piece<'a> {
    Text(&'a str),
    Var(&'a str),
}

/// Splits text into literal runs and `{{name}}` placeholders. A name is
/// letters, digits, `_`, `-` or `.`; braces around anything else are text.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let name = after[..close].trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if valid {
            if open > 0 {
                out.push(Piece::Text(&rest[..open]));
            }
            out.push(Piece::Var(name));
            rest = &after[close + 2..];
        } else {
            out.push(Piece::Text(&rest[..open + 2]));
            rest = after;
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

#[cfg(test)]
#[path = "prompt_expand_tests.rs"]
mod tests;

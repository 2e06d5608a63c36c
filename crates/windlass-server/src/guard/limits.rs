//! Size limits of a create request, checked by one pass over the raw body
//! before it is parsed: a request past a limit is refused with a 400 naming
//! the field before anything is allocated for it (a 30 MB body of 900,000
//! one-word items used to peak at 2.4 GB while being parsed and prepared).
//!
//! The pass builds nothing: serde visits the JSON and only lengths, counts
//! and depth are kept. A body that is not valid JSON passes here and gets
//! the parser's own error.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The documented limits (docs/wire.md, "Request limits").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RequestLimits {
    /// Items in `input` (when it is a list).
    pub max_input_items: usize,
    /// Parts in one input item's `content` list.
    pub max_content_parts: usize,
    /// Entries in `tools`.
    pub max_tools: usize,
    /// Bytes of any one JSON string (text, arguments, a data URL…).
    pub max_string_bytes: usize,
    /// Nesting depth of arrays and objects.
    pub max_depth: usize,
    /// `metadata` entries, key and value lengths (OpenAI's limits).
    pub max_metadata_pairs: usize,
    pub max_metadata_key_chars: usize,
    pub max_metadata_value_chars: usize,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            max_input_items: 10_000,
            max_content_parts: 1_000,
            max_tools: 512,
            max_string_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_metadata_pairs: 16,
            max_metadata_key_chars: 64,
            max_metadata_value_chars: 512,
        }
    }
}

/// A limit a request passed: the field (OpenAI's `param` form, e.g.
/// `input[3].content`), what is wrong, and a code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub param: String,
    pub message: String,
    pub code: &'static str,
}

/// Checks `body` against `limits`.
pub fn check(body: &[u8], limits: &RequestLimits) -> Result<(), Violation> {
    let found = RefCell::new(None);
    let walk = Walk {
        lim: limits,
        ctx: Ctx::Top,
        depth: 0,
        found: &found,
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    // A syntax error is the parser's to report.
    let _ = walk.deserialize(&mut de);
    match found.into_inner() {
        Some((mut path, why)) => {
            path.reverse();
            Err(Violation {
                message: format!("Invalid '{}': {}", path.concat(), why.message),
                param: path.concat(),
                code: why.code,
            })
        }
        None => Ok(()),
    }
}

struct Why {
    message: String,
    code: &'static str,
}

/// Path segments, innermost first, and the reason.
type Found = RefCell<Option<(Vec<String>, Why)>>;

/// Where in the request a value sits, for the limits that apply to it.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Top,
    Input,
    InputItem,
    Content,
    Tools,
    Metadata,
    MetadataValue,
    /// A parameter that must be an object (`text`, `reasoning`, …).
    Object,
    /// A URL field: no credentials in it.
    Url,
    Other,
}

#[derive(Clone, Copy)]
struct Walk<'a> {
    lim: &'a RequestLimits,
    ctx: Ctx,
    depth: usize,
    found: &'a Found,
}

impl<'a> Walk<'a> {
    fn fail<E: de::Error>(&self, message: String, code: &'static str) -> E {
        *self.found.borrow_mut() = Some((Vec::new(), Why { message, code }));
        E::custom("limit")
    }

    /// Adds `segment` to the path of a violation found below.
    fn within<E>(&self, segment: impl FnOnce() -> String, e: E) -> E {
        if let Some((path, _)) = self.found.borrow_mut().as_mut() {
            path.push(segment());
        }
        e
    }

    fn child(&self, ctx: Ctx) -> Walk<'a> {
        Walk {
            ctx,
            depth: self.depth + 1,
            ..*self
        }
    }

    /// Serde would read a struct from an array (`"text": []` would pass as
    /// an empty object): the type is checked here.
    fn not_object<E: de::Error>(&self, got: &str) -> Result<(), E> {
        if matches!(self.ctx, Ctx::Object | Ctx::Metadata) {
            return Err(self.fail(
                format!("expected an object, but got {got} instead."),
                "invalid_type",
            ));
        }
        Ok(())
    }

    /// Any string, object keys included.
    fn length<E: de::Error>(&self, s: &str) -> Result<(), E> {
        if s.len() > self.lim.max_string_bytes {
            return Err(self.fail(
                format!(
                    "string too long. Expected a string with maximum length {} bytes, but got a string with length {} instead.",
                    self.lim.max_string_bytes,
                    s.len()
                ),
                "string_above_max_length",
            ));
        }
        Ok(())
    }

    fn string<E: de::Error>(&self, s: &str) -> Result<(), E> {
        self.not_object("a string")?;
        self.length(s)?;
        if self.ctx == Ctx::Url && has_credentials(s) {
            // The message never repeats the URL: it holds a secret.
            return Err(self.fail(
                "URLs must not carry credentials (user:password@); send them as headers or `authorization` instead.".to_owned(),
                "credentials_in_url",
            ));
        }
        let chars = self.lim.max_metadata_value_chars;
        if self.ctx == Ctx::MetadataValue && s.chars().count() > chars {
            return Err(self.fail(
                format!("string too long. Expected a string with maximum length {chars}."),
                "string_above_max_length",
            ));
        }
        Ok(())
    }

    fn array_limit(&self) -> Option<(usize, Ctx)> {
        match self.ctx {
            Ctx::Input => Some((self.lim.max_input_items, Ctx::InputItem)),
            Ctx::Content => Some((self.lim.max_content_parts, Ctx::Other)),
            Ctx::Tools => Some((self.lim.max_tools, Ctx::Other)),
            _ => None,
        }
    }

    fn key_ctx(&self, key: &str) -> Ctx {
        match (self.ctx, key) {
            (Ctx::Top, "input") => Ctx::Input,
            (Ctx::Top, "tools") => Ctx::Tools,
            (Ctx::Top, "metadata") => Ctx::Metadata,
            (Ctx::Top, "text" | "reasoning" | "stream_options") => Ctx::Object,
            (Ctx::InputItem, "content") => Ctx::Content,
            (Ctx::Metadata, _) => Ctx::MetadataValue,
            (_, "server_url" | "url" | "image_url" | "file_url") => Ctx::Url,
            _ => Ctx::Other,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.not_object("a boolean")
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.not_object("a number")
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.not_object("a number")
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.not_object("a number")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.string(s)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.not_object::<A::Error>("an array")?;
        self.deeper::<A::Error>()?;
        let (max, inner) = self.array_limit().unwrap_or((usize::MAX, Ctx::Other));
        let mut n = 0usize;
        loop {
            let seed = self.child(inner);
            match seq.next_element_seed(seed) {
                Ok(Some(())) => n += 1,
                Ok(None) => break,
                Err(e) => return Err(self.within(|| format!("[{n}]"), e)),
            }
            if n > max {
                // Counted to the end without looking inside, for the message.
                while seq.next_element::<de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                return Err(self.fail(
                    format!("array too long. Expected an array with maximum length {max}, but got an array with length {n} instead."),
                    "array_above_max_length",
                ));
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.deeper::<A::Error>()?;
        let mut n = 0usize;
        let key_seed = Key { walk: self };
        while let Some(key) = map.next_key_seed(key_seed)? {
            n += 1;
            if self.ctx == Ctx::Metadata {
                self.metadata_entry::<A::Error>(&key, n)?;
            }
            let child = self.child(self.key_ctx(&key));
            if let Err(e) = map.next_value_seed(child) {
                let sep = if self.ctx == Ctx::Top { "" } else { "." };
                return Err(self.within(|| format!("{sep}{key}"), e));
            }
        }
        Ok(())
    }
}

impl Walk<'_> {
    fn deeper<E: de::Error>(&self) -> Result<(), E> {
        if self.depth >= self.lim.max_depth {
            return Err(self.fail(
                format!(
                    "nested too deeply (more than {} levels).",
                    self.lim.max_depth
                ),
                "nesting_too_deep",
            ));
        }
        Ok(())
    }

    fn metadata_entry<E: de::Error>(&self, key: &str, n: usize) -> Result<(), E> {
        let lim = self.lim;
        if n > lim.max_metadata_pairs {
            return Err(self.fail(
                format!(
                    "too many properties. Expected an object with at most {} properties.",
                    lim.max_metadata_pairs
                ),
                "object_above_max_properties",
            ));
        }
        if key.chars().count() > lim.max_metadata_key_chars {
            return Err(self.fail(
                format!(
                    "key too long. Expected keys of at most {} characters.",
                    lim.max_metadata_key_chars
                ),
                "string_above_max_length",
            ));
        }
        Ok(())
    }
}

/// Whether `url` has a `user[:password]@` part before its host.
pub fn has_credentials(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.contains('@')
}

/// A map key: checked against the string limit before it is copied.
#[derive(Clone, Copy)]
struct Key<'a> {
    walk: Walk<'a>,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
        self.walk.length(s)?;
        Ok(s.to_owned())
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;

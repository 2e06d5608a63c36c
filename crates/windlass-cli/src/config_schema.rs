//! The config file's settings, read from the config structs themselves.
//!
//! Every config struct derives `schemars::JsonSchema` beside `Deserialize`;
//! schemars reads the same `#[serde]` attributes (renames, defaults,
//! flatten, untagged), so the JSON Schema it derives is the shape serde
//! accepts. Walking that schema gives every setting's dotted path and kind.
//! The environment overrides (`config_env.rs`) use it to know which
//! variables name settings and how to read their values, and a test checks
//! `windlass.example.toml` against it. A new field in any `[section]`
//! appears here without anyone listing it.
//!
//! Paths: `server.max_connections`; `[]` for an array's elements
//! (`upstreams.[].url`); `*` for a table keyed by the operator's names
//! (`governance.keys.*.autonomy`).

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// What a setting holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Float,
    Str,
    /// An array; its elements are at `path.[]`.
    Seq,
    /// A table keyed by the operator's names; entries at `path.*`.
    Map,
    /// A table with fixed keys.
    Table,
    /// Decided by the value itself (e.g. a string or a table).
    Any,
}

/// Every path the config structs accept, with its kind.
#[derive(Debug, Default, Clone)]
pub struct Schema {
    kinds: BTreeMap<String, Kind>,
}

/// Nesting followed at most: a recursive type would otherwise never end.
const MAX_DEPTH: usize = 16;

impl Schema {
    /// The shape of `T` at the root.
    pub fn of<T: JsonSchema>() -> Schema {
        let root = schemars::schema_for!(T);
        let json = root.as_value();
        let walk = Walk {
            defs: json.get("$defs").and_then(Value::as_object),
        };
        let mut schema = Schema::default();
        walk.node(json, "", 0, &mut schema.kinds);
        schema
    }

    pub fn kind(&self, path: &str) -> Option<Kind> {
        self.kinds.get(path).copied()
    }

    /// Every path and its kind.
    pub fn entries(&self) -> impl Iterator<Item = (&str, Kind)> {
        self.kinds.iter().map(|(p, k)| (p.as_str(), *k))
    }

    /// The settings an operator writes: paths with nothing below them (an
    /// array of plain values counts as one setting).
    pub fn settings(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (path, _) in self.entries() {
            let prefix = format!("{path}.");
            let has_children = self
                .kinds
                .range(prefix.clone()..)
                .next()
                .is_some_and(|(p, _)| p.starts_with(&prefix));
            if has_children {
                continue;
            }
            match path.strip_suffix(".[]") {
                Some(array) => out.insert(array.to_owned()),
                None => out.insert(path.to_owned()),
            };
        }
        out
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A walk over one derived schema, resolving `$ref`s into its `$defs`.
struct Walk<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl<'a> Walk<'a> {
    /// Records `path` and everything below it.
    fn node(&self, schema: &'a Value, path: &str, depth: usize, out: &mut BTreeMap<String, Kind>) {
        let schema = self.concrete(schema);
        let kind = self.kind(schema);
        if !path.is_empty() {
            out.insert(path.to_owned(), kind);
        }
        if depth >= MAX_DEPTH {
            return;
        }
        match kind {
            Kind::Table => {
                let fields = schema.get("properties").and_then(Value::as_object);
                for (name, field) in fields.into_iter().flatten() {
                    self.node(field, &child(path, name), depth + 1, out);
                }
            }
            Kind::Map => {
                let entry = schema
                    .get("additionalProperties")
                    .unwrap_or(&Value::Bool(true));
                self.node(entry, &child(path, "*"), depth + 1, out);
            }
            Kind::Seq => {
                let element = schema.get("items").unwrap_or(&Value::Bool(true));
                self.node(element, &child(path, "[]"), depth + 1, out);
            }
            _ => {}
        }
    }

    /// The schema itself, past `$ref`s, a lone `allOf` and an `Option`'s
    /// `anyOf: [T, null]`.
    fn concrete(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..MAX_DEPTH {
            if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
                let name = target.trim_start_matches("#/$defs/");
                match self.defs.and_then(|d| d.get(name)) {
                    Some(def) => schema = def,
                    None => return schema,
                }
                continue;
            }
            let mut variants = non_null_variants(schema);
            match (variants.next(), variants.next()) {
                (Some(only), None) => schema = only,
                _ => return schema,
            }
        }
        schema
    }

    fn kind(&self, schema: &'a Value) -> Kind {
        let variants: Vec<&Value> = non_null_variants(schema).collect();
        if !variants.is_empty() {
            // An enum whose variants carry docs is a `oneOf` of one-string
            // schemas: the same kind throughout is that kind.
            let first = self.kind(self.concrete(variants[0]));
            let same = variants[1..]
                .iter()
                .all(|v| self.kind(self.concrete(v)) == first);
            return if same { first } else { Kind::Any };
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return string_constants(schema),
        };
        let mut types = types.into_iter().filter(|t| *t != "null");
        match (types.next(), types.next()) {
            (Some("boolean"), None) => Kind::Bool,
            (Some("integer"), None) => Kind::Int,
            (Some("number"), None) => Kind::Float,
            (Some("string"), None) => Kind::Str,
            (Some("array"), None) => Kind::Seq,
            (Some("object"), None) if schema.get("properties").is_some() => Kind::Table,
            (Some("object"), None) => Kind::Map,
            _ => Kind::Any,
        }
    }
}

/// The `anyOf`/`oneOf` variants of `schema` other than `{"type": "null"}`.
fn non_null_variants(schema: &Value) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flatten()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
}

/// `{"const": "x"}` or `{"enum": [...]}` of strings alone is a string.
fn string_constants(schema: &Value) -> Kind {
    let all_strings = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => c.is_string(),
        (None, Some(Value::Array(values))) => values.iter().all(Value::is_string),
        _ => false,
    };
    if all_strings {
        Kind::Str
    } else {
        Kind::Any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::num::NonZeroU32;

    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        per_minute: NonZeroU32,
        tags: Vec<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        /// Documented variants make a `oneOf`.
        Fast,
        Slow,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum NameOrTable {
        Name(String),
        Table { name: String },
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Shared {
        on_all: Option<bool>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Root {
        name: Option<String>,
        on: bool,
        ratio: f64,
        mode: Mode,
        inner: Inner,
        maybe: Option<Inner>,
        list: Vec<Inner>,
        named: BTreeMap<String, Inner>,
        either: Vec<NameOrTable>,
        #[serde(rename = "loop")]
        agent_loop: Option<u32>,
        #[serde(flatten)]
        shared: Shared,
    }

    #[test]
    fn every_field_is_found_with_its_kind() {
        let s = Schema::of::<Root>();
        assert_eq!(s.kind("name"), Some(Kind::Str));
        assert_eq!(s.kind("on"), Some(Kind::Bool));
        assert_eq!(s.kind("ratio"), Some(Kind::Float));
        assert_eq!(s.kind("mode"), Some(Kind::Str));
        assert_eq!(s.kind("inner"), Some(Kind::Table));
        assert_eq!(s.kind("inner.per_minute"), Some(Kind::Int));
        assert_eq!(s.kind("inner.tags"), Some(Kind::Seq));
        assert_eq!(s.kind("maybe.tags.[]"), Some(Kind::Str));
        assert_eq!(s.kind("list.[].per_minute"), Some(Kind::Int));
        assert_eq!(s.kind("named"), Some(Kind::Map));
        assert_eq!(s.kind("named.*.tags.[]"), Some(Kind::Str));
        // A string or a table: decided by the value, nothing listed below.
        assert_eq!(s.kind("either.[]"), Some(Kind::Any));
        assert_eq!(s.kind("either.[].name"), None);
        // serde's renames and flattening, as serde reads the file.
        assert_eq!(s.kind("loop"), Some(Kind::Int));
        assert_eq!(s.kind("agent_loop"), None);
        assert_eq!(s.kind("on_all"), Some(Kind::Bool));
        assert_eq!(s.kind("shared"), None);
        let settings = s.settings();
        for p in [
            "inner.tags",
            "list.[].tags",
            "named.*.per_minute",
            "either",
            "on_all",
        ] {
            assert!(settings.contains(p), "{p}: {settings:?}");
        }
        assert!(!settings.contains("inner"));
        assert!(!settings.contains("inner.tags.[]"));
    }
}

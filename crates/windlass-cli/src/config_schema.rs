//! The config file's settings, read from the config structs themselves.
//!
//! Serde's derive hands a struct's deserializer the list of its fields, and
//! asks for each value by type (`deserialize_u64`, `deserialize_str`, …). A
//! deserializer that answers with a harmless value of every type and writes
//! down what it was asked for walks the whole shape: every setting's dotted
//! path and kind. The environment overrides (`config_env.rs`) use it to know
//! which variables name settings and how to read their values, and a test
//! checks `windlass.example.toml` against it. A new field in any `[section]`
//! appears here without anyone listing it.
//!
//! Paths: `server.max_connections`; `[]` for an array's elements
//! (`upstreams.[].url`); `*` for a table keyed by the operator's names
//! (`governance.keys.*.autonomy`).

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;

use crate::config_probe::{Probe, State};

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

/// Passes before giving up on fields that refuse every probe value.
const MAX_PASSES: usize = 64;

impl Schema {
    /// The shape of `T` at the root.
    pub fn of<T: DeserializeOwned>() -> Schema {
        let mut schema = Schema::default();
        schema.add::<T>("", &[]);
        schema
    }

    /// Adds the shape of `T` under `prefix`, not looking inside the paths in
    /// `opaque` (known by hand: e.g. a `#[serde(flatten)]`, which hides
    /// fields from a deserializer).
    pub fn add<T: DeserializeOwned>(&mut self, prefix: &str, opaque: &[&str]) {
        let state = State::new(std::mem::take(&mut self.kinds), opaque);
        // A field whose type refuses the probe's values (a custom check, a
        // required field left out) fails its parent; it is left out of the
        // next pass, so every other field is still visited.
        for _ in 0..MAX_PASSES {
            match T::deserialize(Probe::new(prefix, &state)) {
                Ok(_) => break,
                Err(e) => {
                    let at = e.at.unwrap_or_else(|| prefix.to_owned());
                    if at == prefix || !state.skip(at) {
                        break;
                    }
                }
            }
        }
        self.kinds = state.into_kinds();
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::num::NonZeroU32;

    use serde::{de, Deserialize};

    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        per_minute: NonZeroU32,
        tags: Vec<String>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Root {
        name: Option<String>,
        on: bool,
        ratio: f64,
        mode: Mode,
        inner: Inner,
        list: Vec<Inner>,
        named: BTreeMap<String, Inner>,
        #[serde(deserialize_with = "refuse")]
        picky: u32,
        after: u64,
    }

    fn refuse<'de, D: de::Deserializer<'de>>(_: D) -> Result<u32, D::Error> {
        Err(de::Error::custom("never"))
    }

    #[test]
    fn every_field_is_found_with_its_kind() {
        let s = Schema::of::<Root>();
        assert_eq!(s.kind("name"), Some(Kind::Str));
        assert_eq!(s.kind("on"), Some(Kind::Bool));
        assert_eq!(s.kind("ratio"), Some(Kind::Float));
        assert_eq!(s.kind("mode"), Some(Kind::Str));
        assert_eq!(s.kind("inner.per_minute"), Some(Kind::Int));
        assert_eq!(s.kind("inner.tags"), Some(Kind::Seq));
        assert_eq!(s.kind("list.[].per_minute"), Some(Kind::Int));
        assert_eq!(s.kind("named.*.tags.[]"), Some(Kind::Str));
        // A field that refuses every value is still listed, and the fields
        // after it are still visited.
        assert_eq!(s.kind("picky"), Some(Kind::Any));
        assert_eq!(s.kind("after"), Some(Kind::Int));
        let settings = s.settings();
        for p in ["inner.tags", "list.[].tags", "named.*.per_minute", "picky"] {
            assert!(settings.contains(p), "{p}: {settings:?}");
        }
        assert!(!settings.contains("inner"));
        assert!(!settings.contains("inner.tags.[]"));
    }
}

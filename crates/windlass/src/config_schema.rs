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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

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
        let state = State {
            kinds: RefCell::new(std::mem::take(&mut self.kinds)),
            skip: RefCell::new(opaque.iter().map(|s| s.to_string()).collect()),
        };
        // A field whose type refuses the probe's values (a custom check, a
        // required field left out) fails its parent; it is left out of the
        // next pass, so every other field is still visited.
        for _ in 0..MAX_PASSES {
            let probe = Probe {
                path: prefix.to_owned(),
                state: &state,
            };
            match T::deserialize(probe) {
                Ok(_) => break,
                Err(e) => {
                    let at = e.at.unwrap_or_else(|| prefix.to_owned());
                    if at == prefix || !state.skip.borrow_mut().insert(at) {
                        break;
                    }
                }
            }
        }
        self.kinds = state.kinds.into_inner();
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

struct State {
    kinds: RefCell<BTreeMap<String, Kind>>,
    skip: RefCell<BTreeSet<String>>,
}

impl State {
    fn record(&self, path: &str, kind: Kind) {
        if path.is_empty() {
            return;
        }
        let mut kinds = self.kinds.borrow_mut();
        let entry = kinds.entry(path.to_owned()).or_insert(kind);
        if *entry == Kind::Any {
            *entry = kind;
        }
    }

    fn skipped(&self, path: &str) -> bool {
        self.skip.borrow().contains(path)
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

#[derive(Debug)]
struct ProbeError {
    /// The innermost field whose value failed.
    at: Option<String>,
    message: String,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProbeError {}

impl de::Error for ProbeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ProbeError {
            at: None,
            message: msg.to_string(),
        }
    }
}

/// Blames `path` for an error from below that no deeper field claimed.
fn blame(path: &str) -> impl FnOnce(ProbeError) -> ProbeError + '_ {
    move |mut e| {
        if e.at.is_none() {
            e.at = Some(path.to_owned());
        }
        e
    }
}

struct Probe<'s> {
    path: String,
    state: &'s State,
}

impl<'s> Probe<'s> {
    fn at(&self, path: String) -> Probe<'s> {
        Probe {
            path,
            state: self.state,
        }
    }

    fn leaf(&self, kind: Kind) {
        self.state.record(&self.path, kind);
    }
}

macro_rules! leaf {
    ($($method:ident => $kind:ident, $visit:ident($($value:expr)?);)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
            self.leaf(Kind::$kind);
            visitor.$visit($($value)?)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = ProbeError;

    leaf! {
        deserialize_any => Any, visit_unit();
        deserialize_bool => Bool, visit_bool(false);
        deserialize_i8 => Int, visit_i64(1);
        deserialize_i16 => Int, visit_i64(1);
        deserialize_i32 => Int, visit_i64(1);
        deserialize_i64 => Int, visit_i64(1);
        deserialize_u8 => Int, visit_u64(1);
        deserialize_u16 => Int, visit_u64(1);
        deserialize_u32 => Int, visit_u64(1);
        deserialize_u64 => Int, visit_u64(1);
        deserialize_f32 => Float, visit_f64(1.0);
        deserialize_f64 => Float, visit_f64(1.0);
        deserialize_char => Str, visit_char('x');
        deserialize_str => Str, visit_str("x");
        deserialize_string => Str, visit_str("x");
        deserialize_identifier => Str, visit_str("x");
        deserialize_bytes => Any, visit_bytes(b"");
        deserialize_byte_buf => Any, visit_bytes(b"");
        deserialize_unit => Any, visit_unit();
        deserialize_ignored_any => Any, visit_unit();
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.leaf(Kind::Seq);
        let element = child(&self.path, "[]");
        let n = usize::from(!self.state.skipped(&self.path) && !self.state.skipped(&element));
        visitor.visit_seq(ProbeSeq {
            remaining: n,
            element,
            state: self.state,
        })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.leaf(Kind::Seq);
        visitor.visit_seq(ProbeSeq {
            remaining: len,
            element: child(&self.path, "[]"),
            state: self.state,
        })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.leaf(Kind::Map);
        let keys = if self.state.skipped(&self.path) || self.state.skipped(&child(&self.path, "*"))
        {
            Vec::new()
        } else {
            vec!["*"]
        };
        visitor.visit_map(ProbeMap::new(self, keys))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.leaf(Kind::Table);
        for f in fields {
            self.state.record(&child(&self.path, f), Kind::Any);
        }
        let keys = fields
            .iter()
            .copied()
            .filter(|f| !self.state.skipped(&child(&self.path, f)))
            .collect();
        visitor.visit_map(ProbeMap::new(self, keys))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        // Plain variants are written as strings in TOML.
        self.leaf(Kind::Str);
        let variant = variants.first().copied().unwrap_or("x");
        visitor.visit_enum(ProbeEnum {
            variant,
            probe: self,
        })
    }
}

struct ProbeSeq<'s> {
    remaining: usize,
    element: String,
    state: &'s State,
}

impl<'de> SeqAccess<'de> for ProbeSeq<'_> {
    type Error = ProbeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ProbeError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let probe = Probe {
            path: self.element.clone(),
            state: self.state,
        };
        seed.deserialize(probe)
            .map(Some)
            .map_err(blame(&self.element))
    }
}

struct ProbeMap<'s> {
    probe: Probe<'s>,
    keys: std::vec::IntoIter<&'static str>,
    current: Option<&'static str>,
}

impl<'s> ProbeMap<'s> {
    fn new(probe: Probe<'s>, keys: Vec<&'static str>) -> Self {
        ProbeMap {
            probe,
            keys: keys.into_iter(),
            current: None,
        }
    }
}

impl<'de> MapAccess<'de> for ProbeMap<'_> {
    type Error = ProbeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ProbeError> {
        let Some(key) = self.keys.next() else {
            return Ok(None);
        };
        self.current = Some(key);
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ProbeError> {
        let path = child(&self.probe.path, self.current.unwrap_or("*"));
        seed.deserialize(self.probe.at(path.clone()))
            .map_err(blame(&path))
    }
}

struct ProbeEnum<'s> {
    variant: &'static str,
    probe: Probe<'s>,
}

impl<'de, 's> EnumAccess<'de> for ProbeEnum<'s> {
    type Error = ProbeError;
    type Variant = Probe<'s>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Probe<'s>), ProbeError> {
        let v = seed.deserialize(self.variant.into_deserializer())?;
        Ok((v, self.probe))
    }
}

impl<'de> VariantAccess<'de> for Probe<'_> {
    type Error = ProbeError;

    fn unit_variant(self) -> Result<(), ProbeError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, ProbeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::num::NonZeroU32;

    use serde::Deserialize;

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

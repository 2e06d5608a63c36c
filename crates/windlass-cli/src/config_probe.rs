//! The deserializer behind `config_schema.rs`: it answers every request
//! for a value with a harmless one of that type and writes down the path
//! and kind it was asked for.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess,
    Visitor,
};

use crate::config_schema::Kind;

pub(crate) struct State {
    kinds: RefCell<BTreeMap<String, Kind>>,
    skip: RefCell<BTreeSet<String>>,
}

impl State {
    pub(crate) fn new(kinds: BTreeMap<String, Kind>, opaque: &[&str]) -> Self {
        State {
            kinds: RefCell::new(kinds),
            skip: RefCell::new(opaque.iter().map(|s| s.to_string()).collect()),
        }
    }

    /// Leaves `path` out of the next pass; false if it already was.
    pub(crate) fn skip(&self, path: String) -> bool {
        self.skip.borrow_mut().insert(path)
    }

    pub(crate) fn into_kinds(self) -> BTreeMap<String, Kind> {
        self.kinds.into_inner()
    }

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
pub(crate) struct ProbeError {
    /// The innermost field whose value failed.
    pub(crate) at: Option<String>,
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

pub(crate) struct Probe<'s> {
    path: String,
    state: &'s State,
}

impl<'s> Probe<'s> {
    pub(crate) fn new(path: &str, state: &'s State) -> Self {
        Probe {
            path: path.to_owned(),
            state,
        }
    }

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

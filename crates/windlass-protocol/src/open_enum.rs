//! A `type`-tagged enum whose unknown tags keep their raw JSON.
//!
//! serde's own fallback (`#[serde(untagged)]` variant) swallows the error of a
//! malformed *known* variant and silently turns it into the fallback; here a
//! known tag with bad fields is an error that names the field, and only an
//! unknown tag becomes `Unknown(raw)`.

/// Serializes `inner` with a leading `"type": tag` field.
#[derive(serde::Serialize)]
pub(crate) struct Tagged<'a, T: serde::Serialize> {
    #[serde(rename = "type")]
    pub tag: &'a str,
    #[serde(flatten)]
    pub inner: &'a T,
}

macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $tag:literal => $var:ident($ty:ty) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        // The wire grows: a new known type becomes a new variant.
        #[non_exhaustive]
        // One variant per wire `type`, named for the tag beside it in the
        // invocation; the type it carries is documented.
        #[allow(missing_docs)]
        pub enum $name {
            $( $(#[$vmeta])* $var($ty), )*
            /// A type this version does not know; kept verbatim.
            Unknown(serde_json::Value),
        }

        impl $name {
            /// The wire `type` of this value.
            pub fn type_name(&self) -> &str {
                match self {
                    $( $name::$var(_) => $tag, )*
                    $name::Unknown(v) => v.get("type").and_then(|t| t.as_str()).unwrap_or(""),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $name::$var(inner) => $crate::open_enum::Tagged { tag: $tag, inner }.serialize(s), )*
                    $name::Unknown(raw) => raw.serialize(s),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error as _;
                let raw = serde_json::Value::deserialize(d)?;
                let tag = match raw.get("type") {
                    Some(serde_json::Value::String(t)) => t.clone(),
                    // `"type": null` is the same as no type: the contract
                    // allows it on item references (`ItemReferenceParam`).
                    Some(serde_json::Value::Null) | None => {
                        return $name::untyped(raw).map_err(D::Error::custom)
                    }
                    Some(_) => return Err(D::Error::custom("`type` must be a string")),
                };
                match tag.as_str() {
                    $( $tag => serde_json::from_value::<$ty>(raw)
                        .map($name::$var)
                        .map_err(|e| D::Error::custom(format!("invalid `{}`: {}", $tag, e))), )*
                    _ => Ok($name::Unknown(raw)),
                }
            }
        }
    };
}
pub(crate) use open_enum;

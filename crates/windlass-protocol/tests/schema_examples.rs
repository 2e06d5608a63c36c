//! The wire types against the OpenResponses contract itself.
//!
//! The contract (`openapi.json`, spec release 2026-04-24) is read at test
//! time. For every component schema we model, instances are generated from
//! the schema (and the contract's own `example`s are taken verbatim), parsed
//! into the matching Rust type, re-serialized, and compared: every key/value
//! of the input must be present and equal in the output. The output may add
//! keys (defaults, `null`s for unset nullable fields); the only thing it may
//! drop is a key whose input value was `null` (our optional fields serialize
//! "unset" by omission, and the contract treats `null` the same way).
//!
//! Where our types deliberately differ from the contract, the generator is
//! steered by the `OVERRIDES` and `EXTRA_REQUIRED` tables below, each entry
//! with its reason; a test checks that every entry still names a real schema
//! property, so the tables cannot silently go stale.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use windlass_protocol::*;

const SPEC_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/openresponses/openapi.json"
);
const SPEC_RELEASE: &str = "2026-04-24";
const REF_PREFIX: &str = "#/components/schemas/";

fn spec() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| {
        // A missing contract is a failure, never a skip.
        let text = std::fs::read_to_string(SPEC_PATH).unwrap_or_else(|e| {
            panic!("cannot read the OpenResponses contract at {SPEC_PATH}: {e}")
        });
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{SPEC_PATH} is not valid JSON: {e}"))
    })
}

fn schemas() -> &'static Map<String, Value> {
    spec()["components"]["schemas"]
        .as_object()
        .expect("components.schemas is an object")
}

fn schema(name: &str) -> &'static Value {
    schemas()
        .get(name)
        .unwrap_or_else(|| panic!("schema {name} is not in the contract"))
}

// ------------------------------------------------------- schema -> type ----

/// The Rust type a contract schema maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    ResponseResource,
    CreateResponseRequest,
    Item,
    ContentPart,
    Annotation,
    Tool,
    ToolChoice,
    TextParam,
    TextField,
    TextFormat,
    Usage,
    InputTokensDetails,
    OutputTokensDetails,
    ResponseError,
    ErrorPayload,
    IncompleteDetails,
    ReasoningParam,
    StreamOptions,
    LogProb,
    TopLogProb,
    StreamEvent,
    Role,
    ItemStatus,
    ImageDetail,
    Verbosity,
    ReasoningEffort,
    ReasoningSummary,
    Truncation,
}

fn target_of(name: &str) -> Option<Target> {
    use Target as T;
    Some(match name {
        "ResponseResource" => T::ResponseResource,
        "CreateResponseBody" => T::CreateResponseRequest,
        // ItemParam and its variants, ItemField and its variants.
        "ItemParam"
        | "ItemReferenceParam"
        | "ReasoningItemParam"
        | "CompactionSummaryItemParam"
        | "UserMessageItemParam"
        | "SystemMessageItemParam"
        | "DeveloperMessageItemParam"
        | "AssistantMessageItemParam"
        | "FunctionCallItemParam"
        | "FunctionCallOutputItemParam"
        | "ItemField"
        | "Message"
        | "FunctionCall"
        | "FunctionCallOutput"
        | "ReasoningBody"
        | "CompactionBody" => T::Item,
        "InputTextContentParam"
        | "InputImageContentParamAutoParam"
        | "InputFileContentParam"
        | "OutputTextContentParam"
        | "RefusalContentParam"
        | "ReasoningSummaryContentParam"
        | "InputTextContent"
        | "OutputTextContent"
        | "TextContent"
        | "SummaryTextContent"
        | "ReasoningTextContent"
        | "RefusalContent"
        | "InputImageContent"
        | "InputFileContent"
        | "InputVideoContent" => T::ContentPart,
        "Annotation" | "UrlCitationBody" | "UrlCitationParam" => T::Annotation,
        "Tool" | "FunctionTool" | "ResponsesToolParam" | "FunctionToolParam" => T::Tool,
        "ToolChoiceParam"
        | "SpecificToolChoiceParam"
        | "SpecificFunctionParam"
        | "AllowedToolsParam"
        | "ToolChoiceValueEnum"
        | "FunctionToolChoice"
        | "AllowedToolChoice" => T::ToolChoice,
        "TextParam" => T::TextParam,
        "TextField" => T::TextField,
        "TextFormatParam"
        | "TextResponseFormat"
        | "JsonObjectResponseFormat"
        | "JsonSchemaResponseFormat"
        | "JsonSchemaResponseFormatParam" => T::TextFormat,
        "Usage" => T::Usage,
        "InputTokensDetails" => T::InputTokensDetails,
        "OutputTokensDetails" => T::OutputTokensDetails,
        "Error" => T::ResponseError,
        "ErrorPayload" => T::ErrorPayload,
        "IncompleteDetails" => T::IncompleteDetails,
        "ReasoningParam" | "Reasoning" => T::ReasoningParam,
        "StreamOptionsParam" => T::StreamOptions,
        "LogProb" => T::LogProb,
        "TopLogProb" => T::TopLogProb,
        "MessageRole" => T::Role,
        "MessageStatus"
        | "FunctionCallStatus"
        | "FunctionCallItemStatus"
        | "FunctionCallOutputStatusEnum" => T::ItemStatus,
        "ImageDetail" | "DetailEnum" => T::ImageDetail,
        "VerbosityEnum" => T::Verbosity,
        "ReasoningEffortEnum" => T::ReasoningEffort,
        "ReasoningSummaryEnum" => T::ReasoningSummary,
        "TruncationEnum" => T::Truncation,
        n if n.ends_with("StreamingEvent") => T::StreamEvent,
        _ => return None,
    })
}

/// Contract schemas with no Rust type of their own, and why.
const UNMODELED: &[(&str, &str)] = &[
    (
        "IncludeEnum",
        "`include` is a Vec<String>; the server validates values",
    ),
    ("ServiceTierEnum", "`service_tier` is a String"),
    ("MetadataParam", "`metadata` is a JSON map"),
    ("EmptyModelParam", "function `parameters` are raw JSON"),
    (
        "WebSocketResponseCreateEvent",
        "the WebSocket transport is not modeled in this crate",
    ),
    (
        "WebSocketErrorEvent",
        "the WebSocket transport is not modeled in this crate",
    ),
    (
        "CompactResponseMethodPublicBody",
        "/responses/compact is not modeled in this crate",
    ),
    (
        "CompactResource",
        "/responses/compact is not modeled; its example's items and usage are checked",
    ),
];

// --------------------------------------------------- documented drifts ----

enum Fix {
    /// Generate this property from the given schema instead of the contract's.
    Schema(&'static str),
    /// Never generate this property: our type does not model it.
    Skip,
}

/// Where our types knowingly differ from the contract: (schema, property, fix, why).
const OVERRIDES: &[(&str, &str, Fix, &str)] = &[
    (
        "UserMessageItemParam",
        "status",
        Fix::Schema(r##"{"anyOf": [{"$ref": "#/components/schemas/MessageStatus"}, {"type": "null"}]}"##),
        "a free string in the contract; Message.status is the ItemStatus enum",
    ),
    (
        "SystemMessageItemParam",
        "status",
        Fix::Schema(r##"{"anyOf": [{"$ref": "#/components/schemas/MessageStatus"}, {"type": "null"}]}"##),
        "a free string in the contract; Message.status is the ItemStatus enum",
    ),
    (
        "DeveloperMessageItemParam",
        "status",
        Fix::Schema(r##"{"anyOf": [{"$ref": "#/components/schemas/MessageStatus"}, {"type": "null"}]}"##),
        "a free string in the contract; Message.status is the ItemStatus enum",
    ),
    (
        "AssistantMessageItemParam",
        "status",
        Fix::Schema(r##"{"anyOf": [{"$ref": "#/components/schemas/MessageStatus"}, {"type": "null"}]}"##),
        "a free string in the contract; Message.status is the ItemStatus enum",
    ),
    (
        "ResponseResource",
        "status",
        Fix::Schema(
            r#"{"type": "string", "enum": ["completed", "in_progress", "queued", "incomplete", "failed"]}"#,
        ),
        "a free string in the contract; ResponseStatus is an enum",
    ),
    (
        "ResponseOutputItemAddedStreamingEvent",
        "item",
        Fix::Schema(r##"{"$ref": "#/components/schemas/ItemField"}"##),
        "nullable in the contract; EventData::OutputItemAdded.item is not an Option",
    ),
    (
        "ResponseOutputItemDoneStreamingEvent",
        "item",
        Fix::Schema(r##"{"$ref": "#/components/schemas/ItemField"}"##),
        "nullable in the contract; EventData::OutputItemDone.item is not an Option",
    ),
    (
        "ResponseOutputTextAnnotationAddedStreamingEvent",
        "annotation",
        Fix::Schema(r##"{"$ref": "#/components/schemas/Annotation"}"##),
        "nullable in the contract; EventData::OutputTextAnnotationAdded.annotation is not an Option",
    ),
    (
        "ErrorPayload",
        "headers",
        Fix::Skip,
        "not modeled: ErrorPayload has no `headers`",
    ),
    (
        "ResponseOutputTextDeltaStreamingEvent",
        "obfuscation",
        Fix::Skip,
        "not modeled: delta events carry no `obfuscation`",
    ),
    (
        "ResponseReasoningDeltaStreamingEvent",
        "obfuscation",
        Fix::Skip,
        "not modeled: delta events carry no `obfuscation`",
    ),
    (
        "ResponseReasoningSummaryDeltaStreamingEvent",
        "obfuscation",
        Fix::Skip,
        "not modeled: delta events carry no `obfuscation`",
    ),
    (
        "ResponseFunctionCallArgumentsDeltaStreamingEvent",
        "obfuscation",
        Fix::Skip,
        "not modeled: delta events carry no `obfuscation`",
    ),
];

/// Properties our types require although the contract does not: (schema, properties, why).
const EXTRA_REQUIRED: &[(&str, &[&str], &str)] = &[
    (
        "FunctionToolChoice",
        &["name"],
        "optional in the contract; SpecificFunction.name is required",
    ),
    (
        "JsonSchemaResponseFormatParam",
        &["type", "name", "schema"],
        "the contract requires nothing; JsonSchemaFormat requires name and schema, as OpenAI does",
    ),
];

fn override_for(owner: &str, prop: &str) -> Option<&'static Fix> {
    OVERRIDES
        .iter()
        .find(|(s, p, _, _)| *s == owner && *p == prop)
        .map(|(_, _, f, _)| f)
}

// ------------------------------------------------------------ generator ----

/// Builds instances of a schema: required properties only (`full == false`)
/// or every property; each union picks its alternative number `k % len`
/// (so `k == 0` is "first alternatives"); values come from `example`, then
/// `enum` (again `k % len`), then type defaults.
struct Gen {
    k: usize,
    full: bool,
}

impl Gen {
    fn component(&self, name: &str) -> Value {
        self.named(name, "", true, 0)
    }

    fn named(&self, name: &str, hint: &str, root: bool, depth: usize) -> Value {
        let s = schema(name);
        if root {
            // The schema's own example is tested as such; generate the rest.
            let mut s = s.clone();
            if let Some(m) = s.as_object_mut() {
                m.remove("example");
                m.remove("examples");
            }
            return self.value(name, &s, hint, depth);
        }
        self.value(name, s, hint, depth)
    }

    fn value(&self, owner: &str, s: &Value, hint: &str, depth: usize) -> Value {
        assert!(depth < 40, "schema recursion too deep at {owner}.{hint}");
        let k = self.k;
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r
                .strip_prefix(REF_PREFIX)
                .unwrap_or_else(|| panic!("unexpected $ref {r}"));
            return self.named(name, hint, false, depth + 1);
        }
        if let Some(ex) = s.get("example") {
            return ex.clone();
        }
        if let Some(Value::Array(exs)) = s.get("examples") {
            if !exs.is_empty() {
                return exs[k % exs.len()].clone();
            }
        }
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(e)) = s.get("enum") {
            return e[k % e.len()].clone();
        }
        if let Some(Value::Array(parts)) = s.get("allOf") {
            let parts: Vec<Value> = parts
                .iter()
                .filter(|p| !is_annotation_only(p))
                .map(|p| self.value(owner, p, hint, depth + 1))
                .collect();
            return merge_all(parts);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(alts)) = s.get(key) {
                // A `type` discriminator always gets its tag: the Rust side
                // dispatches on it (the null tag is covered in parsing.rs).
                let alt = if hint == "type" {
                    alts.iter()
                        .find(|a| a.get("type") != Some(&json!("null")))
                        .unwrap_or(&alts[0])
                } else {
                    &alts[k % alts.len()]
                };
                return self.value(owner, alt, hint, depth + 1);
            }
        }
        match s.get("type").and_then(Value::as_str) {
            Some("object") => self.object(owner, s, depth),
            None if s.get("properties").is_some() => self.object(owner, s, depth),
            Some("array") => {
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let n = if self.full { min.max(1) } else { min };
                let items = s.get("items").expect("array schema has items");
                Value::Array(
                    (0..n)
                        .map(|_| self.value(owner, items, hint, depth + 1))
                        .collect(),
                )
            }
            Some("string") => {
                let mut v = if hint.is_empty() {
                    "value".to_string()
                } else {
                    hint.to_string()
                };
                let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                while v.len() < min {
                    v.push('x');
                }
                Value::String(v)
            }
            Some("integer") => {
                let min = s.get("minimum").and_then(Value::as_i64).unwrap_or(0);
                let mut n = min + k as i64;
                if let Some(max) = s.get("maximum").and_then(Value::as_i64) {
                    n = n.min(max);
                }
                json!(n)
            }
            Some("number") => json!(k as f64 + 0.5),
            Some("boolean") => json!(k % 2 == 1),
            Some("null") => Value::Null,
            Some(other) => panic!("unexpected type {other} in {owner}"),
            // `{}` or `additionalProperties` only: any JSON; an empty object.
            None => json!({}),
        }
    }

    fn object(&self, owner: &str, s: &Value, depth: usize) -> Value {
        let empty = Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut required: BTreeSet<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, extra, _) in EXTRA_REQUIRED {
            if *name == owner {
                required.extend(extra.iter().copied());
            }
        }
        let mut keys: Vec<&str> = required.iter().copied().collect();
        if self.full {
            for k in props.keys() {
                if !required.contains(k.as_str()) {
                    keys.push(k);
                }
            }
        }
        let mut out = Map::new();
        for key in keys {
            let value = match (override_for(owner, key), props.get(key)) {
                (Some(Fix::Skip), _) => continue,
                (Some(Fix::Schema(js)), _) => {
                    let s: Value = serde_json::from_str(js).expect("override schema is JSON");
                    self.value(owner, &s, key, depth + 1)
                }
                (None, Some(p)) => self.value(owner, p, key, depth + 1),
                // Required but not described (e.g. `UrlCitationBody.title`):
                // the contract's prose makes all of these strings.
                (None, None) => Value::String(key.to_string()),
            };
            out.insert(key.to_string(), value);
        }
        if self.full {
            if let Some(ap @ Value::Object(m)) = s.get("additionalProperties") {
                if !m.is_empty() {
                    out.insert("key".into(), self.value(owner, ap, "value", depth + 1));
                }
            }
        }
        Value::Object(out)
    }
}

/// `{}` or a schema with only descriptive keywords (as in `allOf: [$ref, {}]`).
fn is_annotation_only(s: &Value) -> bool {
    s.as_object().is_some_and(|m| {
        m.keys().all(|k| {
            matches!(
                k.as_str(),
                "description" | "title" | "default" | "x-openresponses-added-in"
            )
        })
    })
}

fn merge_all(parts: Vec<Value>) -> Value {
    let mut iter = parts.into_iter();
    let mut acc = iter.next().unwrap_or(Value::Null);
    for p in iter {
        match (&mut acc, p) {
            (Value::Object(a), Value::Object(b)) => a.extend(b),
            (_, other) => panic!("cannot merge allOf parts {acc} and {other}"),
        }
    }
    acc
}

/// The distinct generated instances of a component schema. For string
/// enums: every value.
fn instances(name: &str) -> Vec<Value> {
    if let Some(Value::Array(values)) = schema(name).get("enum") {
        return values.clone();
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for k in 0..10 {
        for full in [false, true] {
            let v = Gen { k, full }.component(name);
            if seen.insert(v.to_string()) {
                out.push(v);
            }
        }
    }
    out
}

// ----------------------------------------------------------- round trip ----

/// Every key/value of `input` is in `output`, recursively; arrays match
/// element by element; numbers compare by value (`1` == `1.0`). A key whose
/// input value is `null` may be absent from the output.
fn covers(input: &Value, output: &Value, path: &str, errs: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(w) => covers(v, w, &p, errs),
                    None if v.is_null() => {}
                    None => errs.push(format!("{p}: missing from the output (input {v})")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                errs.push(format!("{path}: {} items in, {} out", a.len(), b.len()));
                return;
            }
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                covers(v, w, &format!("{path}[{i}]"), errs);
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            let same = match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x == y,
                _ => match (a.as_u64(), b.as_u64()) {
                    (Some(x), Some(y)) => x == y,
                    _ => a.as_f64() == b.as_f64(),
                },
            };
            if !same {
                errs.push(format!("{path}: {a} became {b}"));
            }
        }
        (a, b) => {
            if a != b {
                errs.push(format!("{path}: {a} became {b}"));
            }
        }
    }
}

/// `v` parses as `T`, passes `check`, and re-serializes (through a string,
/// as on the wire) to JSON that parses back to the same `T`.
fn rt<T>(v: &Value, check: impl Fn(&T) -> Result<(), String>) -> Result<Value, String>
where
    T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
{
    let x: T = serde_json::from_value(v.clone()).map_err(|e| format!("does not parse: {e}"))?;
    check(&x)?;
    let s = serde_json::to_string(&x).map_err(|e| format!("does not serialize: {e}"))?;
    let again: T =
        serde_json::from_str(&s).map_err(|e| format!("own output {s} does not parse: {e}"))?;
    if again != x {
        return Err(format!("{x:?} came back as {again:?}"));
    }
    Ok(serde_json::from_str(&s).expect("serde_json output is JSON"))
}

/// Not `Unknown`, and the wire `type` (when the input has one) is kept.
fn known(type_name: &str, unknown: bool, v: &Value) -> Result<(), String> {
    if unknown {
        return Err("parsed as Unknown".into());
    }
    match v.get("type").and_then(Value::as_str) {
        Some(t) if t != type_name => Err(format!("type {t} parsed as {type_name}")),
        _ => Ok(()),
    }
}

fn ok<T>(_: &T) -> Result<(), String> {
    Ok(())
}

fn round_trip(target: Target, v: &Value) -> Result<Value, String> {
    use Target as T;
    let out = match target {
        T::ResponseResource => rt::<ResponseResource>(v, ok)?,
        T::CreateResponseRequest => rt::<CreateResponseRequest>(v, |r| {
            if r.extra.is_empty() {
                Ok(())
            } else {
                Err(format!("contract fields landed in `extra`: {:?}", r.extra))
            }
        })?,
        T::Item => rt::<Item>(v, |x| {
            known(x.type_name(), matches!(x, Item::Unknown(_)), v)
        })?,
        T::ContentPart => rt::<ContentPart>(v, |x| {
            known(x.type_name(), matches!(x, ContentPart::Unknown(_)), v)
        })?,
        T::Annotation => rt::<Annotation>(v, |x| {
            known(x.type_name(), matches!(x, Annotation::Unknown(_)), v)
        })?,
        T::Tool => rt::<Tool>(v, |x| {
            known(x.type_name(), matches!(x, Tool::Unknown(_)), v)
        })?,
        T::ToolChoice => rt::<ToolChoice>(v, |x| match (x, v) {
            (ToolChoice::Mode(_), Value::String(_)) => Ok(()),
            (ToolChoice::Object(o), Value::Object(_)) => {
                known(o.type_name(), matches!(o, ToolChoiceObject::Unknown(_)), v)
            }
            _ => Err(format!("parsed as {x:?}")),
        })?,
        T::TextParam => rt::<TextParam>(v, |x| match &x.format {
            Some(TextFormat::Unknown(_)) => Err("format parsed as Unknown".into()),
            _ => Ok(()),
        })?,
        T::TextField => rt::<TextField>(v, |x| match &x.format {
            TextFormat::Unknown(_) => Err("format parsed as Unknown".into()),
            _ => Ok(()),
        })?,
        T::TextFormat => rt::<TextFormat>(v, |x| {
            known(x.type_name(), matches!(x, TextFormat::Unknown(_)), v)
        })?,
        T::Usage => rt::<Usage>(v, ok)?,
        T::InputTokensDetails => rt::<InputTokensDetails>(v, ok)?,
        T::OutputTokensDetails => rt::<OutputTokensDetails>(v, ok)?,
        T::ResponseError => rt::<ResponseError>(v, ok)?,
        T::ErrorPayload => rt::<ErrorPayload>(v, ok)?,
        T::IncompleteDetails => rt::<IncompleteDetails>(v, ok)?,
        T::ReasoningParam => rt::<ReasoningParam>(v, ok)?,
        T::StreamOptions => rt::<StreamOptions>(v, ok)?,
        T::LogProb => rt::<LogProb>(v, ok)?,
        T::TopLogProb => rt::<TopLogProb>(v, ok)?,
        T::StreamEvent => rt::<StreamEvent>(v, |x| {
            known(x.event_type(), matches!(x.data, EventData::Unknown(_)), v)
        })?,
        T::Role => rt::<Role>(v, ok)?,
        T::ItemStatus => rt::<ItemStatus>(v, ok)?,
        T::ImageDetail => rt::<ImageDetail>(v, ok)?,
        T::Verbosity => rt::<Verbosity>(v, ok)?,
        T::ReasoningEffort => rt::<ReasoningEffort>(v, ok)?,
        T::ReasoningSummary => rt::<ReasoningSummary>(v, ok)?,
        T::Truncation => rt::<Truncation>(v, ok)?,
    };
    let mut errs = Vec::new();
    covers(v, &out, "$", &mut errs);
    if target == T::ResponseResource {
        for key in required_of("ResponseResource") {
            if out.get(&key).is_none() {
                errs.push(format!("$.{key}: required key not serialized"));
            }
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(format!("output {out}\n    {}", errs.join("\n    ")))
    }
}

fn required_of(name: &str) -> Vec<String> {
    schema(name)["required"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} has no `required`"))
        .iter()
        .map(|k| k.as_str().expect("required names are strings").to_string())
        .collect()
}

// ---------------------------------------------------------------- tests ----

#[test]
fn contract_is_present_and_the_expected_release() {
    assert_eq!(
        spec()["info"]["version"],
        json!(SPEC_RELEASE),
        "wrong contract release at {SPEC_PATH}"
    );
    assert!(schemas().len() > 50, "suspiciously few schemas");
}

#[test]
fn every_schema_is_mapped_or_listed_as_unmodeled() {
    let mut unaccounted = Vec::new();
    for name in schemas().keys() {
        let listed = UNMODELED.iter().any(|(n, _)| n == name);
        match (target_of(name), listed) {
            (Some(t), true) => panic!("{name} is both mapped (to {t:?}) and listed as unmodeled"),
            (None, false) => unaccounted.push(name.clone()),
            _ => {}
        }
    }
    assert!(
        unaccounted.is_empty(),
        "contract schemas with no Rust type and no reason: {unaccounted:?}"
    );
    for (name, _) in UNMODELED {
        assert!(
            schemas().contains_key(*name),
            "UNMODELED lists {name}, not in the contract"
        );
    }
}

#[test]
fn drift_tables_name_real_schema_properties() {
    for (owner, prop, fix, why) in OVERRIDES {
        let props = &schema(owner)["properties"];
        assert!(
            props.get(*prop).is_some(),
            "override {owner}.{prop} ({why}) names no contract property"
        );
        if let Fix::Schema(js) = fix {
            serde_json::from_str::<Value>(js).unwrap_or_else(|e| panic!("{owner}.{prop}: {e}"));
        }
    }
    for (owner, extra, why) in EXTRA_REQUIRED {
        let s = schema(owner);
        let required = s.get("required").and_then(Value::as_array);
        for p in *extra {
            assert!(
                s["properties"].get(*p).is_some(),
                "{owner}.{p} ({why}) is not a contract property"
            );
            assert!(
                !required.is_some_and(|r| r.contains(&json!(p))),
                "{owner}.{p} is already required by the contract; drop the entry"
            );
        }
    }
}

#[test]
fn generator_honours_required_and_examples() {
    // Minimal instances carry exactly the required keys...
    let min = Gen { k: 0, full: false }.component("FunctionCallItemParam");
    let keys: BTreeSet<&str> = min
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["arguments", "call_id", "name", "type"])
    );
    assert_eq!(min["type"], json!("function_call"));
    // ...full ones every property, examples first.
    let full = Gen { k: 0, full: true }.component("FunctionCallItemParam");
    assert_eq!(full["id"], json!("fc_123"));
    assert!(full.get("status").is_some());
    // Other `k`s take other union branches.
    let alt = Gen { k: 1, full: true }.component("FunctionCallItemParam");
    assert_eq!(alt["id"], Value::Null);
    assert_ne!(instances("ItemParam").len(), 1);
}

/// Every `example`/`examples` in the contract, at schema or property level.
#[test]
fn contract_examples_round_trip() {
    // (component schema, JSON pointer inside it, example)
    let mut found: Vec<(String, String, Value)> = Vec::new();
    fn walk(x: &Value, ptr: String, out: &mut Vec<(String, Value)>) {
        match x {
            Value::Object(m) => {
                for (k, v) in m {
                    if k == "example" {
                        out.push((ptr.clone(), v.clone()));
                    } else if k == "examples" {
                        for (i, e) in v.as_array().into_iter().flatten().enumerate() {
                            out.push((format!("{ptr}/examples/{i}"), e.clone()));
                        }
                    } else {
                        walk(v, format!("{ptr}/{k}"), out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, format!("{ptr}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    for (name, s) in schemas() {
        let mut here = Vec::new();
        walk(s, String::new(), &mut here);
        found.extend(here.into_iter().map(|(p, v)| (name.clone(), p, v)));
    }
    let schema_level = found.iter().filter(|(_, p, _)| p.is_empty()).count();
    assert!(
        schema_level >= 2,
        "expected the ResponseResource and CompactResource examples"
    );
    assert!(
        found.len() > schema_level,
        "expected property-level examples too"
    );

    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, ptr, example) in &found {
        let label = format!("{name}{ptr}");
        if ptr.is_empty() {
            // A whole-schema example: parse it as the schema's type.
            match target_of(name) {
                Some(t) => {
                    if let Err(e) = round_trip(t, example) {
                        failures.push(format!("{label}: {e}"));
                    }
                    checked += 1;
                }
                None if name == "CompactResource" => {
                    for (i, item) in example["output"].as_array().unwrap().iter().enumerate() {
                        if let Err(e) = round_trip(Target::Item, item) {
                            failures.push(format!("{label}/output/{i}: {e}"));
                        }
                        checked += 1;
                    }
                    if let Err(e) = round_trip(Target::Usage, &example["usage"]) {
                        failures.push(format!("{label}/usage: {e}"));
                    }
                    checked += 1;
                }
                None => failures.push(format!("{label}: example on an unmodeled schema")),
            }
            continue;
        }
        // A property-level example: `/properties/<prop>/...`.
        let prop = ptr
            .strip_prefix("/properties/")
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("unexpected example location {label}"));
        let Some(t) = target_of(name) else {
            assert!(
                UNMODELED.iter().any(|(n, _)| n == name),
                "{label}: example on a schema that is neither mapped nor listed"
            );
            continue;
        };
        // The full first-branch instance carries the example...
        let instance = Gen { k: 0, full: true }.component(name);
        if instance.get(prop) != Some(example) {
            failures.push(format!(
                "{label}: instance {instance} does not carry the example {example}"
            ));
            continue;
        }
        // ...and round-trips with it.
        if let Err(e) = round_trip(t, &instance) {
            failures.push(format!("{label}: {instance}: {e}"));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= found.len(),
        "checked {checked} of {} examples",
        found.len()
    );
}

/// Minimal and full instances of every mapped schema, across union branches.
#[test]
fn generated_instances_round_trip() {
    let mut failures = Vec::new();
    let mut per_target: BTreeMap<String, usize> = BTreeMap::new();
    for name in schemas().keys() {
        let Some(t) = target_of(name) else { continue };
        let all = instances(name);
        assert!(!all.is_empty(), "no instances for {name}");
        for v in all {
            *per_target.entry(format!("{t:?}")).or_default() += 1;
            if let Err(e) = round_trip(t, &v) {
                failures.push(format!("{name} {v}:\n    {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Everything the brief names got exercised.
    for t in [
        "ResponseResource",
        "CreateResponseRequest",
        "Item",
        "ContentPart",
        "Tool",
        "ToolChoice",
        "TextParam",
        "Usage",
        "ResponseError",
        "ErrorPayload",
        "StreamEvent",
    ] {
        assert!(
            per_target.get(t).copied().unwrap_or(0) > 0,
            "no {t} instances"
        );
    }
}

/// Every union branch of `ItemParam`/`ItemField` and every event type of the
/// contract parses to the intended variant, not just to something.
#[test]
fn generated_unions_cover_every_variant() {
    let mut item_types = BTreeSet::new();
    for name in ["ItemParam", "ItemField"] {
        for v in instances(name) {
            let item: Item = serde_json::from_value(v.clone()).unwrap();
            item_types.insert(item.type_name().to_string());
        }
    }
    for t in [
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "compaction",
        "item_reference",
    ] {
        assert!(item_types.contains(t), "no {t} among {item_types:?}");
    }
    let roles: BTreeSet<String> = schemas()
        .keys()
        .filter(|n| n.ends_with("MessageItemParam"))
        .flat_map(|n| instances(n))
        .map(|v| match serde_json::from_value::<Item>(v).unwrap() {
            Item::Message(m) => serde_json::to_value(m.role).unwrap().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(roles.len(), 4, "{roles:?}");
}

// ------------------------------------------------- required keys checks ----

fn sample_response() -> ResponseResource {
    ResponseResource {
        id: "resp_1".into(),
        object: "response".into(),
        created_at: 1_741_476_777,
        completed_at: None,
        status: ResponseStatus::InProgress,
        incomplete_details: None,
        model: "m".into(),
        previous_response_id: None,
        instructions: None,
        output: vec![],
        error: None,
        tools: vec![],
        tool_choice: ToolChoice::default(),
        truncation: Truncation::Disabled,
        parallel_tool_calls: true,
        text: TextField::default(),
        top_p: 1.0,
        presence_penalty: 0.0,
        frequency_penalty: 0.0,
        top_logprobs: 0,
        temperature: 1.0,
        reasoning: None,
        usage: None,
        max_output_tokens: None,
        max_tool_calls: None,
        store: true,
        background: false,
        service_tier: "default".into(),
        metadata: Map::new(),
        safety_identifier: None,
        prompt_cache_key: None,
        allowed_tools: None,
        user: None,
        conversation: None,
        prompt: None,
        stop_sequence: None,
    }
}

fn is_nullable(prop: &Value) -> bool {
    prop.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|alts| alts.iter().any(|a| a.get("type") == Some(&json!("null"))))
}

/// A JSON value's kind against a schema's simple `type`, if it has one.
fn kind_matches(prop: &Value, v: &Value) -> bool {
    match prop.get("type").and_then(Value::as_str) {
        Some("string") => v.is_string(),
        Some("integer") => v.is_u64() || v.is_i64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    }
}

#[test]
fn response_resource_serializes_all_31_required_keys() {
    let required = required_of("ResponseResource");
    assert_eq!(
        required.len(),
        31,
        "the contract's ResponseResource changed"
    );
    let props = &schema("ResponseResource")["properties"];

    // Every optional field unset: nullable keys must be present as null.
    let bare = serde_json::to_value(sample_response()).unwrap();
    let obj = bare.as_object().unwrap();
    let mut nullable = 0;
    for key in &required {
        let v = obj
            .get(key)
            .unwrap_or_else(|| panic!("required key `{key}` missing from {bare}"));
        let p = &props[key];
        if is_nullable(p) {
            nullable += 1;
            assert!(v.is_null(), "`{key}` should be null when unset, is {v}");
        } else {
            assert!(
                !v.is_null(),
                "`{key}` is not nullable but serialized as null"
            );
            assert!(kind_matches(p, v), "`{key}` = {v} does not match {p}");
        }
    }
    assert!(nullable >= 10, "only {nullable} nullable keys");
    // Nothing beyond the contract unless set.
    for k in obj.keys() {
        assert!(required.contains(k), "unexpected key `{k}` in {bare}");
    }

    // Every optional field set: still all present, now non-null.
    let mut full = sample_response();
    full.completed_at = Some(2);
    full.status = ResponseStatus::Incomplete;
    full.incomplete_details = Some(IncompleteDetails {
        reason: "max_output_tokens".into(),
    });
    full.previous_response_id = Some("resp_0".into());
    full.instructions = Some("be brief".into());
    full.error = Some(ResponseError {
        code: "server_error".into(),
        message: "m".into(),
    });
    full.reasoning = Some(ReasoningParam::default());
    full.usage = Some(Usage::default());
    full.max_output_tokens = Some(16);
    full.max_tool_calls = Some(1);
    full.safety_identifier = Some("s".into());
    full.prompt_cache_key = Some("k".into());
    let v = serde_json::to_value(&full).unwrap();
    for key in &required {
        let x = v
            .get(key)
            .unwrap_or_else(|| panic!("`{key}` missing from {v}"));
        assert!(!x.is_null(), "`{key}` is null although set");
        assert!(kind_matches(&props[key], x), "`{key}` = {x}");
    }
    assert_eq!(v["status"], json!("incomplete"));
    assert_eq!(serde_json::from_value::<ResponseResource>(v).unwrap(), full);
}

fn all_event_data() -> Vec<EventData> {
    use EventData::*;
    let r = || Box::new(sample_response());
    let item = Item::FunctionCall(FunctionCall {
        id: Some("fc_1".into()),
        call_id: "call_1".into(),
        name: "f".into(),
        arguments: "{}".into(),
        namespace: None,
        status: Some(ItemStatus::InProgress),
    });
    let part = ContentPart::output_text("");
    let id = || "msg_1".to_string();
    vec![
        Created { response: r() },
        Queued { response: r() },
        InProgress { response: r() },
        Completed { response: r() },
        Failed { response: r() },
        Incomplete { response: r() },
        Cancelled { response: r() },
        RequiresAction { response: r() },
        OutputItemAdded {
            output_index: 0,
            item: item.clone(),
        },
        OutputItemDone {
            output_index: 0,
            item,
        },
        ContentPartAdded {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            part: part.clone(),
        },
        ContentPartDone {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            part: part.clone(),
        },
        OutputTextDelta {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            delta: "d".into(),
            logprobs: vec![],
        },
        OutputTextDone {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            text: "t".into(),
            logprobs: vec![],
        },
        OutputTextAnnotationAdded {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            annotation_index: 0,
            annotation: Annotation::UrlCitation(UrlCitation {
                url: "https://x".into(),
                start_index: 0,
                end_index: 1,
                title: "x".into(),
            }),
        },
        RefusalDelta {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            delta: "d".into(),
        },
        RefusalDone {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            refusal: "r".into(),
        },
        FunctionCallArgumentsDelta {
            item_id: id(),
            output_index: 0,
            delta: "{".into(),
        },
        FunctionCallArgumentsDone {
            item_id: id(),
            output_index: 0,
            arguments: "{}".into(),
        },
        ReasoningDelta {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            delta: "d".into(),
        },
        ReasoningDone {
            item_id: id(),
            output_index: 0,
            content_index: 0,
            text: "t".into(),
        },
        ReasoningSummaryPartAdded {
            item_id: id(),
            output_index: 0,
            summary_index: 0,
            part: ContentPart::SummaryText(TextPart { text: "".into() }),
        },
        ReasoningSummaryPartDone {
            item_id: id(),
            output_index: 0,
            summary_index: 0,
            part: ContentPart::SummaryText(TextPart { text: "s".into() }),
        },
        ReasoningSummaryTextDelta {
            item_id: id(),
            output_index: 0,
            summary_index: 0,
            delta: "d".into(),
        },
        ReasoningSummaryTextDone {
            item_id: id(),
            output_index: 0,
            summary_index: 0,
            text: "t".into(),
        },
        Error {
            error: ErrorPayload {
                kind: "server_error".into(),
                code: None,
                message: "boom".into(),
                param: None,
            },
        },
        McpListToolsInProgress {
            item_id: id(),
            output_index: 0,
        },
        McpListToolsCompleted {
            item_id: id(),
            output_index: 0,
        },
        McpListToolsFailed {
            item_id: id(),
            output_index: 0,
        },
        McpCallInProgress {
            item_id: id(),
            output_index: 0,
        },
        McpCallCompleted {
            item_id: id(),
            output_index: 0,
        },
        McpCallFailed {
            item_id: id(),
            output_index: 0,
        },
        McpCallArgumentsDelta {
            item_id: id(),
            output_index: 0,
            delta: "{".into(),
        },
        McpCallArgumentsDone {
            item_id: id(),
            output_index: 0,
            arguments: "{}".into(),
        },
        CustomToolCallInputDelta {
            item_id: id(),
            output_index: 0,
            delta: "*** Begin".into(),
        },
        CustomToolCallInputDone {
            item_id: id(),
            output_index: 0,
            input: "*** Begin".into(),
        },
        FileSearchCallInProgress {
            item_id: id(),
            output_index: 0,
        },
        FileSearchCallSearching {
            item_id: id(),
            output_index: 0,
        },
        FileSearchCallCompleted {
            item_id: id(),
            output_index: 0,
        },
        WebSearchCallInProgress {
            item_id: id(),
            output_index: 0,
        },
        WebSearchCallSearching {
            item_id: id(),
            output_index: 0,
        },
        WebSearchCallCompleted {
            item_id: id(),
            output_index: 0,
        },
        CodeInterpreterCallInProgress {
            item_id: id(),
            output_index: 0,
        },
        CodeInterpreterCallInterpreting {
            item_id: id(),
            output_index: 0,
        },
        CodeInterpreterCallCompleted {
            item_id: id(),
            output_index: 0,
        },
        CodeInterpreterCallCodeDelta {
            item_id: id(),
            output_index: 0,
            delta: "print(".into(),
        },
        CodeInterpreterCallCodeDone {
            item_id: id(),
            output_index: 0,
            code: "print(6*7)".into(),
        },
    ]
}

/// A number per variant; adding a variant to `EventData` breaks this match,
/// which is the reminder to add it to `all_event_data`.
fn variant_ordinal(e: &EventData) -> usize {
    use EventData::*;
    match e {
        Created { .. } => 0,
        Queued { .. } => 1,
        InProgress { .. } => 2,
        Completed { .. } => 3,
        Failed { .. } => 4,
        Incomplete { .. } => 5,
        Cancelled { .. } => 6,
        RequiresAction { .. } => 7,
        OutputItemAdded { .. } => 8,
        OutputItemDone { .. } => 9,
        ContentPartAdded { .. } => 10,
        ContentPartDone { .. } => 11,
        OutputTextDelta { .. } => 12,
        OutputTextDone { .. } => 13,
        OutputTextAnnotationAdded { .. } => 14,
        RefusalDelta { .. } => 15,
        RefusalDone { .. } => 16,
        FunctionCallArgumentsDelta { .. } => 17,
        FunctionCallArgumentsDone { .. } => 18,
        ReasoningDelta { .. } => 19,
        ReasoningDone { .. } => 20,
        ReasoningSummaryPartAdded { .. } => 21,
        ReasoningSummaryPartDone { .. } => 22,
        ReasoningSummaryTextDelta { .. } => 23,
        ReasoningSummaryTextDone { .. } => 24,
        Error { .. } => 25,
        McpListToolsInProgress { .. } => 26,
        McpListToolsCompleted { .. } => 27,
        McpListToolsFailed { .. } => 28,
        McpCallInProgress { .. } => 29,
        McpCallCompleted { .. } => 30,
        McpCallFailed { .. } => 31,
        McpCallArgumentsDelta { .. } => 32,
        McpCallArgumentsDone { .. } => 33,
        CustomToolCallInputDelta { .. } => 34,
        CustomToolCallInputDone { .. } => 35,
        FileSearchCallInProgress { .. } => 36,
        FileSearchCallSearching { .. } => 37,
        FileSearchCallCompleted { .. } => 38,
        WebSearchCallInProgress { .. } => 39,
        WebSearchCallSearching { .. } => 40,
        WebSearchCallCompleted { .. } => 41,
        CodeInterpreterCallInProgress { .. } => 42,
        CodeInterpreterCallInterpreting { .. } => 43,
        CodeInterpreterCallCompleted { .. } => 44,
        CodeInterpreterCallCodeDelta { .. } => 45,
        CodeInterpreterCallCodeDone { .. } => 46,
        Unknown(_) => usize::MAX,
    }
}
const EVENT_VARIANTS: usize = 47;

/// Required keys of the events that are extensions (no contract schema).
const EXTENSION_EVENT_KEYS: &[(&str, &[&str])] = &[
    (
        "response.cancelled",
        &["type", "sequence_number", "response"],
    ),
    (
        "response.requires_action",
        &["type", "sequence_number", "response"],
    ),
    (
        "response.mcp_list_tools.in_progress",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_list_tools.completed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_list_tools.failed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_call.in_progress",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_call.completed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_call.failed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.mcp_call_arguments.delta",
        &[
            "type",
            "sequence_number",
            "item_id",
            "output_index",
            "delta",
        ],
    ),
    (
        "response.mcp_call_arguments.done",
        &[
            "type",
            "sequence_number",
            "item_id",
            "output_index",
            "arguments",
        ],
    ),
    (
        "response.custom_tool_call_input.delta",
        &[
            "type",
            "sequence_number",
            "item_id",
            "output_index",
            "delta",
        ],
    ),
    (
        "response.custom_tool_call_input.done",
        &[
            "type",
            "sequence_number",
            "item_id",
            "output_index",
            "input",
        ],
    ),
    (
        "response.file_search_call.in_progress",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.file_search_call.searching",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.file_search_call.completed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.web_search_call.in_progress",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.web_search_call.searching",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.web_search_call.completed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.code_interpreter_call.in_progress",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.code_interpreter_call.interpreting",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.code_interpreter_call.completed",
        &["type", "sequence_number", "item_id", "output_index"],
    ),
    (
        "response.code_interpreter_call_code.delta",
        &[
            "type",
            "sequence_number",
            "item_id",
            "output_index",
            "delta",
        ],
    ),
    (
        "response.code_interpreter_call_code.done",
        &["type", "sequence_number", "item_id", "output_index", "code"],
    ),
];

#[test]
fn one_event_value_per_variant() {
    let events = all_event_data();
    let ordinals: BTreeSet<usize> = events.iter().map(variant_ordinal).collect();
    assert_eq!(ordinals, (0..EVENT_VARIANTS).collect::<BTreeSet<_>>());
    let types: BTreeSet<&str> = events.iter().map(EventData::event_type).collect();
    assert_eq!(types.len(), EVENT_VARIANTS, "duplicate event types");
}

#[test]
fn stream_events_serialize_the_contract_required_keys() {
    let events: BTreeMap<String, EventData> = all_event_data()
        .into_iter()
        .map(|e| (e.event_type().to_string(), e))
        .collect();
    let mut covered = BTreeSet::new();
    let mut failures = Vec::new();
    let event_schemas: Vec<&String> = schemas()
        .keys()
        .filter(|n| n.ends_with("StreamingEvent"))
        .collect();
    assert!(
        event_schemas.len() >= 24,
        "{} event schemas",
        event_schemas.len()
    );
    for name in event_schemas {
        let s = schema(name);
        let tag = s["properties"]["type"]["enum"][0]
            .as_str()
            .unwrap_or_else(|| panic!("{name} has no type tag"));
        let Some(data) = events.get(tag) else {
            failures.push(format!("{name}: no EventData variant for `{tag}`"));
            continue;
        };
        covered.insert(tag.to_string());
        let ev = StreamEvent {
            data: data.clone(),
            sequence_number: 7,
        };
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(v["type"], json!(tag));
        assert_eq!(v["sequence_number"], json!(7));
        for key in required_of(name) {
            match v.get(&key) {
                None => failures.push(format!("{name}: required `{key}` missing from {v}")),
                Some(x) if !kind_matches(&s["properties"][&key], x) => {
                    failures.push(format!("{name}: `{key}` = {x} has the wrong JSON type"))
                }
                Some(_) => {}
            }
        }
        match serde_json::from_value::<StreamEvent>(v.clone()) {
            Ok(back) if back == ev => {}
            Ok(back) => failures.push(format!("{name}: came back as {back:?}")),
            Err(e) => failures.push(format!("{name}: own output does not parse: {e}")),
        }
    }
    for (tag, keys) in EXTENSION_EVENT_KEYS {
        let data = events
            .get(*tag)
            .unwrap_or_else(|| panic!("no EventData variant for `{tag}`"));
        assert!(!covered.contains(*tag), "{tag} now has a contract schema");
        covered.insert(tag.to_string());
        let ev = StreamEvent {
            data: data.clone(),
            sequence_number: 3,
        };
        let v = serde_json::to_value(&ev).unwrap();
        for key in *keys {
            if v.get(*key).is_none() {
                failures.push(format!("{tag}: `{key}` missing from {v}"));
            }
        }
        let back: StreamEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, ev);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every variant is either a contract event or a listed extension.
    let all: BTreeSet<String> = events.keys().cloned().collect();
    assert_eq!(covered, all);
}

#[test]
fn response_lifecycle_events_embed_a_full_response() {
    for data in all_event_data() {
        let v = serde_json::to_value(StreamEvent {
            data: data.clone(),
            sequence_number: 0,
        })
        .unwrap();
        if let Some(r) = v.get("response") {
            for key in required_of("ResponseResource") {
                assert!(
                    r.get(&key).is_some(),
                    "{}: response lacks `{key}`",
                    data.event_type()
                );
            }
        }
    }
}

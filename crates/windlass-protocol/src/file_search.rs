//! The `file_search` hosted tool: its definition in `tools`, the attribute
//! filters and ranking options it shares with `POST /v1/vector_stores/{id}/search`,
//! and the `file_search_call` output item.
//!
//! Filters are evaluated here, as one pure function, so every store (SQLite,
//! Postgres, memory) answers a filtered search identically.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

/// The `include` value that keeps a `file_search_call`'s `results`.
pub const INCLUDE_FILE_SEARCH_RESULTS: &str = "file_search_call.results";

/// Most attributes on one vector store file (OpenAI's limit).
pub const MAX_ATTRIBUTES: usize = 16;
/// Longest attribute key, in characters.
pub const MAX_ATTRIBUTE_KEY: usize = 64;
/// Longest string attribute value, in characters.
pub const MAX_ATTRIBUTE_STRING: usize = 512;

/// `{"type": "file_search", "vector_store_ids": [...], ...}` in `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileSearchTool {
    pub vector_store_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Filter>,
    /// 1..=50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_results: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking_options: Option<RankingOptions>,
}

/// A value of a file's `attributes`: a string, a number or a boolean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttributeValue {
    /// A string attribute.
    String(String),
    /// A number attribute.
    Number(Number),
    /// A boolean attribute.
    Bool(bool),
}

/// The attributes of a file attached to a vector store.
pub type Attributes = BTreeMap<String, AttributeValue>;

/// Why a set of attributes is refused (OpenAI's limits).
pub fn check_attributes(attributes: &Attributes) -> Result<(), String> {
    if attributes.len() > MAX_ATTRIBUTES {
        return Err(format!("at most {MAX_ATTRIBUTES} attributes are allowed"));
    }
    for (key, value) in attributes {
        if key.chars().count() > MAX_ATTRIBUTE_KEY {
            return Err(format!(
                "attribute key '{key}' is longer than {MAX_ATTRIBUTE_KEY} characters"
            ));
        }
        if let AttributeValue::String(s) = value {
            if s.chars().count() > MAX_ATTRIBUTE_STRING {
                return Err(format!(
                    "attribute '{key}' is longer than {MAX_ATTRIBUTE_STRING} characters"
                ));
            }
        }
    }
    Ok(())
}

/// A filter on attributes: one comparison, or `and`/`or` of filters.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// A comparison of one attribute with a value.
    Comparison(ComparisonFilter),
    /// `and`/`or` over other filters.
    Compound(CompoundFilter),
}

/// `{"type": "eq", "key": "author", "value": "Ada"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ComparisonFilter {
    #[serde(rename = "type")]
    pub op: ComparisonOp,
    pub key: String,
    pub value: FilterValue,
}

/// The operator of a comparison filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ComparisonOp {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
}

/// What a comparison compares with: a scalar, or a list for `in`/`nin`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterValue {
    /// One value (`eq`, `ne`, `gt`, ...).
    Scalar(AttributeValue),
    /// A list of values (`in`, `nin`).
    List(Vec<AttributeValue>),
}

/// `{"type": "and" | "or", "filters": [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct CompoundFilter {
    #[serde(rename = "type")]
    pub op: CompoundOp,
    pub filters: Vec<Filter>,
}

/// How a compound filter joins its filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum CompoundOp {
    And,
    Or,
}

impl Serialize for Filter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Filter::Comparison(c) => c.serialize(s),
            Filter::Compound(c) => c.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Filter {
    /// By `type`: `and`/`or` are compound, anything else a comparison (whose
    /// own parse names a bad operator), so a malformed filter is an error
    /// that says what is wrong rather than "no variant matched".
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(d)?;
        match raw.get("type").and_then(Value::as_str) {
            Some("and" | "or") => serde_json::from_value(raw)
                .map(Filter::Compound)
                .map_err(|e| D::Error::custom(format!("invalid compound filter: {e}"))),
            Some(_) => serde_json::from_value(raw)
                .map(Filter::Comparison)
                .map_err(|e| D::Error::custom(format!("invalid comparison filter: {e}"))),
            None => Err(D::Error::custom("filter is missing `type`")),
        }
    }
}

impl Filter {
    /// Whether a file with `attributes` passes.
    ///
    /// Values compare within their kind: numbers numerically, strings
    /// lexicographically (so ISO dates order), booleans by equality only. A
    /// missing attribute or a value of another kind fails every comparison
    /// except `ne` and `nin`, which it passes.
    pub fn matches(&self, attributes: &Attributes) -> bool {
        match self {
            Filter::Compound(c) => match c.op {
                CompoundOp::And => c.filters.iter().all(|f| f.matches(attributes)),
                CompoundOp::Or => c.filters.iter().any(|f| f.matches(attributes)),
            },
            Filter::Comparison(c) => c.matches(attributes.get(&c.key)),
        }
    }
}

impl ComparisonFilter {
    fn matches(&self, actual: Option<&AttributeValue>) -> bool {
        let ord = |want: &AttributeValue| actual.and_then(|a| compare(a, want));
        match (&self.op, &self.value) {
            (ComparisonOp::In, FilterValue::List(l)) => {
                l.iter().any(|w| ord(w).is_some_and(Ordering::is_eq))
            }
            (ComparisonOp::Nin, FilterValue::List(l)) => {
                !l.iter().any(|w| ord(w).is_some_and(Ordering::is_eq))
            }
            (ComparisonOp::In | ComparisonOp::Nin, FilterValue::Scalar(w)) => {
                (ord(w) == Some(Ordering::Equal)) == (self.op == ComparisonOp::In)
            }
            (_, FilterValue::List(_)) => false,
            (op, FilterValue::Scalar(w)) => {
                let o = ord(w);
                match op {
                    ComparisonOp::Eq => o == Some(Ordering::Equal),
                    ComparisonOp::Ne => o != Some(Ordering::Equal),
                    _ if matches!(w, AttributeValue::Bool(_)) => false,
                    ComparisonOp::Gt => o == Some(Ordering::Greater),
                    ComparisonOp::Gte => o.is_some_and(Ordering::is_ge),
                    ComparisonOp::Lt => o == Some(Ordering::Less),
                    ComparisonOp::Lte => o.is_some_and(Ordering::is_le),
                    ComparisonOp::In | ComparisonOp::Nin => false,
                }
            }
        }
    }
}

/// `actual` against `want` when both are of one kind.
fn compare(actual: &AttributeValue, want: &AttributeValue) -> Option<Ordering> {
    match (actual, want) {
        (AttributeValue::String(a), AttributeValue::String(b)) => Some(a.cmp(b)),
        (AttributeValue::Number(a), AttributeValue::Number(b)) => {
            a.as_f64()?.partial_cmp(&b.as_f64()?)
        }
        (AttributeValue::Bool(a), AttributeValue::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// `ranking_options` of a search or of the `file_search` tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct RankingOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranker: Option<Ranker>,
    /// 0..=1: results scoring below are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_threshold: Option<f64>,
    /// How keyword and embedding rankings are weighted in the fusion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid_search: Option<HybridSearch>,
}

/// `ranking_options.ranker`: the rankers OpenAI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum Ranker {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "default-2024-11-15")]
    Default20241115,
}

/// `ranking_options.hybrid_search`: the weights of vector and keyword scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct HybridSearch {
    pub embedding_weight: f64,
    pub text_weight: f64,
}

/// The `file_search_call` output item. A stored item keeps its complete
/// `results` (so the loop can replay it to the model); what a client sees
/// drops them unless the request included [`INCLUDE_FILE_SEARCH_RESULTS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileSearchCall {
    pub id: String,
    pub queries: Vec<String>,
    pub status: FileSearchCallStatus,
    #[serde(default)]
    pub results: Option<Vec<FileSearchResult>>,
    /// Windlass extension: why the search failed (status `failed`), as the
    /// model was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FileSearchCall {
    /// The item as a client sees it: `results` only when `include` asked
    /// for them (OpenAI answers `null` otherwise).
    pub fn present(&mut self, include: &[String]) {
        if !include.iter().any(|i| i == INCLUDE_FILE_SEARCH_RESULTS) {
            self.results = None;
        }
    }
}

/// A `file_search_call`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum FileSearchCallStatus {
    InProgress,
    Searching,
    Completed,
    Incomplete,
    Failed,
}

/// One retrieved chunk in a `file_search_call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileSearchResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Attributes>,
}

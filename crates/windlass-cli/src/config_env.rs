//! Every config-file setting from the environment, by one rule:
//! `WINDLASS_` + the setting's TOML path in capitals, with `__` between the
//! parts. `[server] max_connections` is `WINDLASS_SERVER__MAX_CONNECTIONS`,
//! `[builtins.shell] timeout_ms` is `WINDLASS_BUILTINS__SHELL__TIMEOUT_MS`,
//! an element of an array of tables is named by its index
//! (`WINDLASS_UPSTREAMS__0__API_KEY`) and a table keyed by names by the
//! name in lower case (`WINDLASS_GOVERNANCE__KEYS__CI__AUTONOMY`).
//! Top-level settings (`listen`, `db`, `log_format`) are the flags' own
//! variables, `WINDLASS_LISTEN` and so on, which the same rule gives.
//!
//! Values are read as the setting's type says (`config_schema.rs`): text
//! as is, numbers and `true`/`false` parsed, an array either as TOML
//! (`["a", "b"]`) or comma-separated. A variable overrides the file; a
//! variable with `__` that names no setting refuses to start, so a typo
//! is not silently ignored.

use crate::config_schema::{Kind, Schema};

pub const PREFIX: &str = "WINDLASS_";
const SEPARATOR: &str = "__";

#[derive(Debug, thiserror::Error)]
#[error("environment variable {var}: {reason}")]
pub struct EnvError {
    pub var: String,
    pub reason: String,
}

/// Applies every `WINDLASS_A__B` variable of `vars` to `table`.
pub fn apply(
    table: &mut toml::Table,
    vars: impl IntoIterator<Item = (String, String)>,
    schema: &Schema,
) -> Result<usize, EnvError> {
    let mut applied = 0;
    for (var, raw) in vars {
        let Some(rest) = var.strip_prefix(PREFIX) else {
            continue;
        };
        if !rest.contains(SEPARATOR) {
            continue;
        }
        let fail = |reason: String| EnvError {
            var: var.clone(),
            reason,
        };
        let parts: Vec<String> = rest.split(SEPARATOR).map(str::to_lowercase).collect();
        let (segments, schema_path) = resolve_path(&parts, schema).map_err(&fail)?;
        let kind = schema.kind(&schema_path).unwrap_or(Kind::Any);
        let value = parse_value(&raw, kind, schema, &schema_path).map_err(&fail)?;
        insert(table, &segments, value).map_err(&fail)?;
        applied += 1;
    }
    Ok(applied)
}

/// One step into the file's tree.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Matches the variable's parts against the schema: a field name, a name
/// in a named table (`*`) or an array index (`[]`).
fn resolve_path(parts: &[String], schema: &Schema) -> Result<(Vec<Segment>, String), String> {
    let mut path = String::new();
    let mut segments = Vec::new();
    for part in parts {
        if part.is_empty() {
            return Err("empty name between `__`".into());
        }
        let join = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        let (field, named, element) = (join(part), join("*"), join("[]"));
        if schema.kind(&field).is_some() {
            segments.push(Segment::Key(part.clone()));
            path = field;
        } else if schema.kind(&named).is_some() {
            segments.push(Segment::Key(part.clone()));
            path = named;
        } else if let (Some(_), Ok(i)) = (schema.kind(&element), part.parse::<usize>()) {
            segments.push(Segment::Index(i));
            path = element;
        } else {
            return Err(format!(
                "names no setting (`{}` is not a key of {})",
                part,
                if path.is_empty() {
                    "the config file".to_owned()
                } else {
                    format!("`{path}`")
                }
            ));
        }
    }
    Ok((segments, path))
}

fn parse_value(raw: &str, kind: Kind, schema: &Schema, path: &str) -> Result<toml::Value, String> {
    let v = raw.trim();
    Ok(match kind {
        Kind::Str => toml::Value::String(raw.to_owned()),
        Kind::Int => v
            .parse::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| format!("expected an integer, got {v:?}"))?,
        Kind::Float => v
            .parse::<f64>()
            .map(toml::Value::Float)
            .map_err(|_| format!("expected a number, got {v:?}"))?,
        Kind::Bool => match v.to_ascii_lowercase().as_str() {
            "true" | "1" => toml::Value::Boolean(true),
            "false" | "0" => toml::Value::Boolean(false),
            _ => return Err(format!("expected true or false, got {v:?}")),
        },
        Kind::Seq if !v.starts_with('[') => {
            let element = format!("{path}.[]");
            let kind = schema.kind(&element).unwrap_or(Kind::Str);
            let items = v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| parse_value(s, kind, schema, &element))
                .collect::<Result<_, _>>()?;
            toml::Value::Array(items)
        }
        // Arrays in TOML form, tables inline (`{ per_minute = 10 }`), and
        // settings whose type decides by the value: TOML if it parses,
        // else text.
        Kind::Seq | Kind::Map | Kind::Table | Kind::Any => {
            match toml::from_str::<toml::Table>(&format!("v = {v}")) {
                Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(raw.to_owned())),
                Err(_) if matches!(kind, Kind::Any) => toml::Value::String(raw.to_owned()),
                Err(e) => return Err(format!("expected a TOML value: {}", e.message())),
            }
        }
    })
}

fn insert(table: &mut toml::Table, segments: &[Segment], value: toml::Value) -> Result<(), String> {
    let Some((last, parents)) = segments.split_last() else {
        return Err("names no setting".into());
    };
    let mut here = toml::Value::Table(std::mem::take(table));
    let result = insert_into(&mut here, parents, last, value);
    if let toml::Value::Table(t) = here {
        *table = t;
    }
    result
}

fn insert_into(
    node: &mut toml::Value,
    parents: &[Segment],
    last: &Segment,
    value: toml::Value,
) -> Result<(), String> {
    let slot = match parents.split_first() {
        None => step(node, last)?,
        Some((first, rest)) => return insert_into(step(node, first)?, rest, last, value),
    };
    *slot = value;
    Ok(())
}

/// The child at `seg`, created empty if missing (an index may name the
/// next new element of an array of tables).
fn step<'a>(node: &'a mut toml::Value, seg: &Segment) -> Result<&'a mut toml::Value, String> {
    match (node, seg) {
        (toml::Value::Table(t), Segment::Key(k)) => Ok(t
            .entry(k.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))),
        (node @ toml::Value::Table(_), Segment::Index(i)) if table_is_empty(node) => {
            *node = toml::Value::Array(Vec::new());
            step(node, &Segment::Index(*i))
        }
        (toml::Value::Array(a), Segment::Index(i)) => {
            if *i == a.len() {
                a.push(toml::Value::Table(toml::Table::new()));
            }
            let len = a.len();
            a.get_mut(*i)
                .ok_or_else(|| format!("index {i} is past the array's {len} elements"))
        }
        (_, seg) => Err(format!("cannot set {seg:?} inside a plain value")),
    }
}

fn table_is_empty(v: &toml::Value) -> bool {
    matches!(v, toml::Value::Table(t) if t.is_empty())
}

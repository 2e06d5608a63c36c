//! `windlass.example.toml` documents every setting: it loads with the real
//! loader, and every setting the config structs accept (read from the
//! structs themselves, `config_schema.rs`) appears in it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use windlass_cli::config::{file_schema, load, Environment};
use windlass_cli::config_schema::Schema;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../windlass.example.toml")
}

/// The schema paths the example's keys stand for (`*` for a named table's
/// keys, `[]` for array elements), down to each setting.
fn written(schema: &Schema, path: &str, value: &toml::Value, out: &mut BTreeSet<String>) {
    out.insert(path.to_owned());
    let is_leaf = !schema
        .entries()
        .any(|(p, _)| p.starts_with(&format!("{path}.")));
    if is_leaf && !path.is_empty() {
        return;
    }
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let field = join(k);
                let step = if schema.kind(&field).is_some() {
                    field
                } else {
                    join("*")
                };
                written(schema, &step, v, out);
            }
        }
        toml::Value::Array(items) => {
            for v in items {
                written(schema, &join("[]"), v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_example_loads_with_the_real_loader() {
    let file = load(Some(&example()), &Environment::default()).expect("example loads");
    assert_eq!(file.listen.as_deref(), Some("127.0.0.1:8080"));
    assert_eq!(file.upstreams.len(), 2);
    assert_eq!(file.server.shutdown_grace_secs, Some(30));
    assert_eq!(file.server.sse_keepalive_secs, Some(15));
}

#[test]
fn every_setting_the_loader_knows_is_in_the_example() {
    let schema = file_schema();
    let text = std::fs::read_to_string(example()).expect("example");
    // An alternative the loader refuses beside its twin (`api_key` with
    // `api_key_env`, `secret` with `secret_env`) is shown commented out as
    // `# key = value`: it counts as documented.
    let alternatives: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if is_assignment(rest) => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut seen = BTreeSet::new();
    for text in [&text, &alternatives] {
        let table: toml::Table = toml::from_str(text).expect("TOML");
        written(&schema, "", &toml::Value::Table(table), &mut seen);
    }
    let settings = schema.settings();
    // The schema found the sections it must (a sanity check on the derive).
    for known in [
        "server.shutdown_grace_secs",
        "loop.max_agentic_turns",
        "upstreams.[].url",
        "governance.keys.*.autonomy",
        "builtins.shell.timeout_ms",
    ] {
        assert!(settings.contains(known), "schema lacks {known}");
    }
    let missing: Vec<_> = settings
        .iter()
        .filter(|s| !seen.contains(s.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "windlass.example.toml does not document: {missing:#?}"
    );
}

/// `key = value` with a bare lower-case key: a setting, not prose.
fn is_assignment(line: &str) -> bool {
    line.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

//! Golden schema test: owns the check that the catalog's seed functions and trigger types (ids,
//! descriptions, metadata and every request / response / trigger-config JSON Schema) match
//! `spec/agent-api-reference.json`, and that each extension function registers exactly its own
//! golden file under `spec/extensions/`.
//!
//! Schemas are compared as JSON values (key order never matters) with numbers compared by their
//! text (`0.0` is not `0`), except that arrays under `required` and `enum` are compared as sets.
//! Every mismatch of every function and trigger is collected and reported at once, as JSON-pointer
//! paths with both values.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;
use session_core::catalog::{OPERATIONS, TRIGGER_TYPES};

const REFERENCE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/agent-api-reference.json"));

/// Array-valued keys whose order carries no meaning.
const SET_KEYS: &[&str] = &["required", "enum"];

/// Longest rendering of one value in a diff line before it is cut.
const MAX_SHOWN: usize = 600;

fn reference() -> Value {
    serde_json::from_str(REFERENCE).expect("spec/agent-api-reference.json is valid JSON")
}

/// `section` ("functions" / "triggers") of the reference, keyed by `name`.
fn reference_entries<'a>(reference: &'a Value, section: &str) -> BTreeMap<&'a str, &'a Value> {
    let list = reference[section]
        .as_array()
        .unwrap_or_else(|| panic!("reference has no `{section}` array"));
    let mut map = BTreeMap::new();
    for entry in list {
        let name = entry["name"].as_str().unwrap_or_else(|| panic!("{section} entry without name"));
        assert!(map.insert(name, entry).is_none(), "reference lists {section} `{name}` twice");
    }
    map
}

fn show(value: Option<&Value>) -> String {
    let Some(value) = value else { return "<absent>".into() };
    let text = value.to_string();
    if text.chars().count() <= MAX_SHOWN {
        return text;
    }
    let cut: String = text.chars().take(MAX_SHOWN).collect();
    format!("{cut}… ({} chars)", text.chars().count())
}

/// Escapes one JSON-pointer reference token (RFC 6901).
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Records every path where `ours` and `want` differ, as `path: ours=… reference=…` lines.
fn diff(
    path: &str,
    key: Option<&str>,
    ours: Option<&Value>,
    want: Option<&Value>,
    out: &mut Vec<String>,
) {
    match (ours, want) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let sub = format!("{path}/{}", token(k));
                diff(&sub, Some(k), a.get(k), b.get(k), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b)))
            if key.is_some_and(|k| SET_KEYS.contains(&k)) =>
        {
            let set = |items: &[Value]| items.iter().map(Value::to_string).collect::<BTreeSet<_>>();
            let (sa, sb) = (set(a), set(b));
            let extra: Vec<_> = sa.difference(&sb).collect();
            let missing: Vec<_> = sb.difference(&sa).collect();
            if !extra.is_empty() || !missing.is_empty() || a.len() != b.len() {
                out.push(format!(
                    "{path} (as a set): only ours={extra:?} only reference={missing:?} (lengths {} vs {})",
                    a.len(),
                    b.len()
                ));
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                diff(&format!("{path}/{i}"), None, a.get(i), b.get(i), out);
            }
        }
        // Numbers compare by their text: a registration that writes `0.0` where the reference
        // writes `0` is a change to a client that diffs registrations.
        (Some(Value::Number(a)), Some(Value::Number(b))) if a.to_string() == b.to_string() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{path}: ours={} reference={}", show(a), show(b))),
    }
}

/// The diff lines between our value and the reference's, empty when semantically equal.
fn differences(label: &str, ours: &Value, want: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    diff("", None, Some(ours), Some(want), &mut lines);
    lines.into_iter().map(|line| format!("{label}{line}")).collect()
}

/// Fails with every collected mismatch, grouped per function / trigger.
fn assert_no_mismatches(what: &str, mismatches: &BTreeMap<String, Vec<String>>) {
    if mismatches.is_empty() {
        return;
    }
    let count: usize = mismatches.values().map(Vec::len).sum();
    let mut report =
        format!("{count} mismatch(es) in {} {what} against the reference:\n", mismatches.len());
    for (name, lines) in mismatches {
        let _ = writeln!(report, "\n== {name}");
        for line in lines {
            let _ = writeln!(report, "  {line}");
        }
    }
    panic!("{report}");
}

#[test]
fn catalog_is_complete() {
    let reference = reference();
    let mut problems = Vec::new();
    // The reference decides how many there are (41 functions, 7 trigger types in the seed): the
    // catalog must list exactly its ids, each once.
    let sections = [
        ("functions", OPERATIONS.iter().map(|op| op.id).collect::<Vec<_>>()),
        ("triggers", TRIGGER_TYPES.iter().map(|t| t.id).collect::<Vec<_>>()),
    ];
    for (section, ours) in sections {
        let theirs: BTreeSet<&str> =
            reference_entries(&reference, section).keys().copied().collect();
        let ours_set: BTreeSet<&str> = ours.iter().copied().collect();
        if ours_set.len() != ours.len() {
            problems.push(format!("{section}: the catalog lists an id twice: {ours:?}"));
        }
        for id in ours_set.difference(&theirs) {
            problems.push(format!("{section}: `{id}` is in the catalog but not in the reference"));
        }
        for id in theirs.difference(&ours_set) {
            problems.push(format!("{section}: `{id}` is in the reference but not in the catalog"));
        }
    }
    assert!(problems.is_empty(), "catalog and reference disagree:\n  {}", problems.join("\n  "));
}

#[test]
fn function_schemas_match_reference() {
    let reference = reference();
    let mut mismatches = BTreeMap::new();
    for (name, want) in reference_entries(&reference, "functions") {
        // A missing id is reported by `catalog_is_complete`; note it here too so nothing hides.
        let Some(op) = OPERATIONS.iter().find(|op| op.id == name) else {
            mismatches.insert(name.to_string(), vec!["missing from the catalog".to_string()]);
            continue;
        };
        let description = Value::String(op.description.to_string());
        let mut lines = differences("description", &description, &want["description"]);
        lines.extend(differences("metadata", &op.kind.flags().to_json(), &want["metadata"]));
        lines.extend(differences(
            "request_schema",
            &(op.request_schema)(),
            &want["request_schema"],
        ));
        lines.extend(differences(
            "response_schema",
            &(op.response_schema)(),
            &want["response_schema"],
        ));
        if !lines.is_empty() {
            let label = format!("{name} ({} => {})", op.request_type, op.response_type);
            mismatches.insert(label, lines);
        }
    }
    assert_no_mismatches("functions", &mismatches);
}

#[test]
fn trigger_schemas_match_reference() {
    let reference = reference();
    let empty = Value::Object(serde_json::Map::new());
    let mut mismatches = BTreeMap::new();
    for (name, want) in reference_entries(&reference, "triggers") {
        let Some(trigger) = TRIGGER_TYPES.iter().find(|t| t.id == name) else {
            mismatches.insert(name.to_string(), vec!["missing from the catalog".to_string()]);
            continue;
        };
        let description = Value::String(trigger.description.to_string());
        let mut lines = differences("description", &description, &want["description"]);
        lines.extend(differences("metadata", &empty, &want["metadata"]));
        lines.extend(differences("return_schema", &empty, &want["return_schema"]));
        lines.extend(differences(
            "invocation_schema",
            &(trigger.config_schema)(),
            &want["invocation_schema"],
        ));
        if !lines.is_empty() {
            mismatches.insert(format!("{name} ({})", trigger.config_type), lines);
        }
    }
    assert_no_mismatches("triggers", &mismatches);
}

#[test]
fn differ_ignores_set_order_but_not_number_text_and_reports_paths() {
    let ours = serde_json::json!({"required": ["a", "b"], "minimum": 0, "p": {"x/y": [1, 2]}});
    let same = serde_json::json!({"minimum": 0, "required": ["b", "a"], "p": {"x/y": [1, 2]}});
    assert!(differences("", &ours, &same).is_empty());
    let float = serde_json::json!({"minimum": 0.0, "required": ["b", "a"], "p": {"x/y": [1, 2]}});
    let lines = differences("", &ours, &float);
    assert_eq!(lines, ["/minimum: ours=0 reference=0.0"], "{lines:#?}");
    let other = serde_json::json!({"required": ["a", "c"], "minimum": 0, "p": {"x/y": [2]}});
    let lines = differences("s", &ours, &other);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines[0].starts_with("s/p/x~1y/0: ours=1 reference=2"), "{lines:#?}");
    assert!(lines[1].starts_with("s/p/x~1y/1: ours=2 reference=<absent>"), "{lines:#?}");
    assert!(lines[2].contains("only ours=[\"\\\"b\\\"\"]"), "{lines:#?}");
}

/// Where the golden registration of an extension is kept: `<id>.json` for a function,
/// `<id>.trigger.json` for a trigger type (`::` written `.`).
fn extension_file(id: &str, trigger: bool) -> std::path::PathBuf {
    let kind = if trigger { ".trigger" } else { "" };
    let name = format!("{}{kind}.json", id.replace("::", "."));
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/extensions").join(name)
}

/// What an extension function registers, in the reference's entry shape.
fn extension_registration(op: &session_core::catalog::Operation) -> Value {
    serde_json::json!({
        "name": op.id,
        "description": op.description,
        "metadata": op.kind.flags().to_json(),
        "request_schema": (op.request_schema)(),
        "response_schema": (op.response_schema)(),
    })
}

/// What an extension trigger type registers, in the reference's entry shape.
fn extension_trigger_registration(trigger: &session_core::catalog::TriggerType) -> Value {
    serde_json::json!({
        "name": trigger.id,
        "description": trigger.description,
        "metadata": {},
        "invocation_schema": (trigger.config_schema)(),
        "return_schema": {},
    })
}

/// Our additive functions and trigger types are not seed ids, each registers exactly its golden
/// file under `spec/extensions/` (numbers by their text), and every golden file belongs to one.
/// A changed extension is a deliberate edit of its file (`GOLDEN_UPDATE=1` rewrites them); the
/// seed's reference never changes.
#[test]
fn extension_registrations_match_their_golden_files() {
    use session_core::catalog::{EXTENSIONS, EXTENSION_TRIGGER_TYPES};
    let reference = reference();
    let seed_functions = reference_entries(&reference, "functions");
    let seed_triggers = reference_entries(&reference, "triggers");
    let update = std::env::var_os("GOLDEN_UPDATE").is_some();
    let mut mismatches = BTreeMap::new();
    let functions = EXTENSIONS.iter().map(|op| (op.id, false, extension_registration(op)));
    let triggers =
        EXTENSION_TRIGGER_TYPES.iter().map(|t| (t.id, true, extension_trigger_registration(t)));
    let mut owned = BTreeSet::new();
    for (id, trigger, ours) in functions.chain(triggers) {
        assert!(!seed_functions.contains_key(id), "extension {id} reuses a seed function id");
        assert!(!seed_triggers.contains_key(id), "extension {id} reuses a seed trigger type id");
        let path = extension_file(id, trigger);
        owned.insert(path.file_name().expect("name").to_string_lossy().into_owned());
        if update {
            let text = serde_json::to_string_pretty(&ours).expect("json") + "\n";
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (GOLDEN_UPDATE=1 writes it)", path.display()));
        let want: Value = serde_json::from_str(&text).expect("golden file is JSON");
        let lines = differences("", &ours, &want);
        if !lines.is_empty() {
            mismatches.insert(id.to_string(), lines);
        }
    }
    assert_no_mismatches("extensions", &mismatches);
    let dir = extension_file("x", false).parent().expect("dir").to_path_buf();
    for file in std::fs::read_dir(&dir).expect("spec/extensions") {
        let name = file.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(
            owned.contains(&name),
            "spec/extensions/{name} belongs to no extension of the catalog"
        );
    }
}

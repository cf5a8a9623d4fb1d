//! The origin's patch: how a line differs from the line this module would write ([`diff`]),
//! and that line with the patch applied ([`apply`]).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

/// How `line` differs from `default` (`None`: not at all): `{"=": value}` replaces, `{"~":
/// {key: patch}, "-": [key]}` edits an object's keys and drops some, `{"#": {index: patch}}`
/// edits an array of the same length.
pub(super) fn diff(line: &Value, default: &Value) -> Option<Value> {
    if line == default {
        return None;
    }
    let mut out = Map::new();
    match (line, default) {
        (Value::Object(line), Value::Object(default)) => {
            let edits: Map<String, Value> = line
                .iter()
                .filter_map(|(k, v)| {
                    let patch = match default.get(k) {
                        Some(d) => diff(v, d)?,
                        None => replace(v),
                    };
                    Some((k.clone(), patch))
                })
                .collect();
            let dropped: Vec<Value> = default
                .keys()
                .filter(|k| !line.contains_key(*k))
                .map(|k| Value::String(k.clone()))
                .collect();
            if !edits.is_empty() {
                out.insert("~".into(), Value::Object(edits));
            }
            if !dropped.is_empty() {
                out.insert("-".into(), Value::Array(dropped));
            }
        }
        (Value::Array(line), Value::Array(default)) if line.len() == default.len() => {
            let edits: Map<String, Value> = line
                .iter()
                .zip(default)
                .enumerate()
                .filter_map(|(i, (l, d))| Some((i.to_string(), diff(l, d)?)))
                .collect();
            out.insert("#".into(), Value::Object(edits));
        }
        _ => return Some(replace(line)),
    }
    Some(Value::Object(out))
}

fn replace(value: &Value) -> Value {
    Value::Object(Map::from_iter([("=".to_string(), value.clone())]))
}

/// `default` with `patch` ([`diff`]'s) applied.
pub(super) fn apply(default: Value, patch: &Value) -> Value {
    let Some(patch) = patch.as_object() else { return default };
    if let Some(value) = patch.get("=") {
        return value.clone();
    }
    match default {
        Value::Object(mut fields) => {
            for key in patch.get("-").and_then(Value::as_array).into_iter().flatten() {
                if let Some(key) = key.as_str() {
                    fields.remove(key);
                }
            }
            let edits = patch.get("~").and_then(Value::as_object);
            for (key, edit) in edits.into_iter().flatten() {
                let old = fields.remove(key).unwrap_or(Value::Null);
                fields.insert(key.clone(), apply(old, edit));
            }
            Value::Object(fields)
        }
        Value::Array(mut items) => {
            let edits = patch.get("#").and_then(Value::as_object);
            for (index, edit) in edits.into_iter().flatten() {
                if let Some(item) = index.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    *item = apply(core::mem::take(item), edit);
                }
            }
            Value::Array(items)
        }
        other => other,
    }
}

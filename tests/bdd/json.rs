//! JSON helpers for assertions: dotted-path lookup, subset matching and readable differences.

use serde_json::Value;

/// Looks up `a.b.0.c` in `value`; `None` when any step is missing.
pub fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| match v {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// Every path where `actual` does not contain `expected` (objects: expected keys must match;
/// arrays and scalars: exact). Empty when `expected` is a subset of `actual`.
pub fn subset_diff(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let p = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match a.get(key) {
                    Some(av) => subset_diff(ev, av, &p, out),
                    None => out.push(format!("{p}: expected {ev}, but the key is absent")),
                }
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!("{}: expected {expected}, got {actual}", display(path))),
    }
}

/// Every path where two values differ exactly (missing and extra keys included).
pub fn exact_diff(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let p = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match a.get(key) {
                    Some(av) => exact_diff(ev, av, &p, out),
                    None => out.push(format!("{p}: expected {ev}, but the key is absent")),
                }
            }
            for key in a.keys().filter(|k| !e.contains_key(*k)) {
                let p = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                out.push(format!("{p}: unexpected key with value {}", a[key]));
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                exact_diff(ev, av, &format!("{path}.{i}"), out);
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!("{}: expected {expected}, got {actual}", display(path))),
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "(root)"
    } else {
        path
    }
}

/// Parses step text as JSON, panicking with the text on failure.
pub fn parse(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("bad JSON in step ({e}): {text}"))
}

//! The difference between two JSON objects as JSON pointers ([`Patch`]): what the stash keeps of
//! the line (or header) pi had against the one this module writes, so a pi file is written back
//! unchanged.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::object_at;

/// The difference between two JSON objects as JSON pointers: what to set (with its value) and
/// what to remove. Objects and equal-length arrays are compared member by member; anything else
/// that differs is set whole.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Patch {
    set: Map<String, Value>,
    unset: Vec<String>,
}

impl Patch {
    /// The patch that turns `derived` into `original`.
    pub(super) fn between(derived: &Value, original: &Value) -> Patch {
        let mut patch = Patch::default();
        patch.compare(derived, original, "");
        patch
    }

    pub(super) fn compare(&mut self, derived: &Value, original: &Value, at: &str) {
        if derived == original {
            return;
        }
        match (derived, original) {
            (Value::Object(d), Value::Object(o)) => {
                for (key, dv) in d {
                    let pointer = format!("{at}/{}", escape(key));
                    match o.get(key) {
                        Some(ov) => self.compare(dv, ov, &pointer),
                        None => self.unset.push(pointer),
                    }
                }
                for (key, ov) in o.iter().filter(|(key, _)| !d.contains_key(*key)) {
                    self.set.insert(format!("{at}/{}", escape(key)), ov.clone());
                }
            }
            (Value::Array(d), Value::Array(o)) if d.len() == o.len() && !at.is_empty() => {
                for (i, (dv, ov)) in d.iter().zip(o).enumerate() {
                    self.compare(dv, ov, &format!("{at}/{i}"));
                }
            }
            _ => {
                self.set.insert(at.into(), original.clone());
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.set.is_empty() && self.unset.is_empty()
    }

    /// Applies the patch to `value` (a pointer whose parent is gone is passed over).
    pub(super) fn apply(&self, value: &mut Value) {
        for pointer in &self.unset {
            let (parent, last) = split_pointer(pointer);
            if let Some(Value::Object(map)) = walk(value, &parent) {
                map.remove(&last);
            }
        }
        for (pointer, new) in &self.set {
            let (parent, last) = split_pointer(pointer);
            match walk(value, &parent) {
                Some(Value::Object(map)) => {
                    map.insert(last, new.clone());
                }
                Some(Value::Array(items)) => {
                    if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                        *slot = new.clone();
                    }
                }
                _ => {}
            }
        }
    }

    /// The patch kept in `pi` (`set`, `unset`).
    pub(super) fn of(pi: &Map<String, Value>) -> Patch {
        let set = object_at(pi, "set").cloned().unwrap_or_default();
        let unset = match pi.get("unset") {
            Some(Value::Array(items)) => {
                items.iter().filter_map(Value::as_str).map(String::from).collect()
            }
            _ => Vec::new(),
        };
        Patch { set, unset }
    }

    /// Keeps the patch in `pi` (nothing when it is empty).
    pub(super) fn put(&self, pi: &mut Map<String, Value>) {
        if !self.set.is_empty() {
            pi.insert("set".into(), Value::Object(self.set.clone()));
        }
        if !self.unset.is_empty() {
            let unset = self.unset.iter().cloned().map(Value::String).collect();
            pi.insert("unset".into(), Value::Array(unset));
        }
    }
}

/// A JSON pointer's reference token for `key` (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A pointer's parent tokens and its last token.
fn split_pointer(pointer: &str) -> (Vec<String>, String) {
    let mut tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect();
    let last = tokens.pop().unwrap_or_default();
    (tokens, last)
}

/// The value `tokens` lead to from `value`.
fn walk<'a>(value: &'a mut Value, tokens: &[String]) -> Option<&'a mut Value> {
    tokens.iter().try_fold(value, |at, token| match at {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => items.get_mut(token.parse::<usize>().ok()?),
        _ => None,
    })
}

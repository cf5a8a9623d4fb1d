//! Request limits, checked on the parsed payload before serde sees it (README "Limits"): nesting
//! depth, size and id length. Nothing here recurses, so a payload of any depth is measured, refused
//! and dropped without growing the stack — serde's own depth limit only guards parsing from text,
//! and a host may hand the core a `Value` built any other way (a JS object, a test).

use alloc::format;
use alloc::vec::Vec;
use serde_json::Value;

use crate::error::{Result, SessionError};
use crate::jsonl::enc_len;

/// Deepest accepted nesting of arrays and objects in a request (the request object counts as
/// one). Stored records add at most three levels, so every log line stays far below the 128 that
/// `serde_json` accepts when a log is replayed.
pub const MAX_DEPTH: usize = 64;

/// Largest accepted request, measured as about the length of its JSON text (string and key bytes
/// plus a few bytes per value). `put-attachment` may be larger: see
/// [`Effects::request_budget`](crate::catalog::Effects::request_budget).
pub const MAX_REQUEST_BYTES: usize = 32 << 20;

/// Longest accepted id (session, entry, parent, attachment), counted once file-name encoded
/// (contract §5.2: bytes outside `[A-Za-z0-9._-]` count three), so every id names a file.
pub const MAX_ID_BYTES: usize = 200;

/// Longest accepted pagination cursor; the core issues cursors of a few hundred bytes.
pub const MAX_CURSOR_BYTES: usize = 4096;

/// Where a request carries ids: top-level fields, and the records of the store protocol.
const ID_PATHS: &[&[&str]] = &[
    &["session_id"],
    &["entry_id"],
    &["parent_id"],
    &["attachment_id"],
    &["from_entry_id"],
    &["to_entry_id"],
    &["after_entry_id"],
    &["before_entry_id"],
    &["until_entry_id"],
    &["meta", "session_id"],
    &["meta", "attachment_id"],
    &["entry", "id"],
    &["entry", "parent_id"],
];

/// Arrays of ids.
const ID_LIST_PATHS: &[&[&str]] = &[&["entry_ids"], &["attachment_ids"]];

/// Checks depth, size and ids of a request. On refusal the payload is taken apart iteratively.
pub fn check(payload: Value, max_bytes: usize) -> Result<Value> {
    let checked =
        measure(&payload, max_bytes).and_then(|may_hold_a_long_id| match may_hold_a_long_id {
            true => check_ids(&payload),
            false => Ok(()),
        });
    match checked {
        Ok(()) => Ok(payload),
        Err(e) => {
            drop_flat(payload);
            Err(e)
        }
    }
}

/// Walks the value with an explicit stack; stops at the first excess. Also tells whether some id
/// could be too long, so [`check_ids`] looks the id paths up only then (most requests have none):
/// every id sits at most two keys deep, and a string of at most a third of [`MAX_ID_BYTES`] is
/// short enough however its bytes encode (encoding at most triples a byte).
fn measure(payload: &Value, max_bytes: usize) -> Result<bool> {
    let mut size = 0usize;
    let mut may_hold_a_long_id = false;
    let mut stack: Vec<(&Value, usize)> = alloc::vec![(payload, 1)];
    while let Some((value, depth)) = stack.pop() {
        size = size.saturating_add(match value {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => 8,
            Value::String(s) => {
                may_hold_a_long_id |= depth <= 3 && s.len() > MAX_ID_BYTES / 3;
                s.len() + 2
            }
            Value::Array(items) => 2 + items.len(),
            Value::Object(map) => 2 + map.keys().map(|k| k.len() + 4).sum::<usize>(),
        });
        if size > max_bytes {
            return Err(SessionError::invalid_request(format!(
                "request is larger than {max_bytes} bytes"
            )));
        }
        let children: &mut dyn Iterator<Item = &Value> = match value {
            Value::Array(items) => &mut items.iter(),
            Value::Object(map) => &mut map.values(),
            _ => continue,
        };
        for child in children {
            if matches!(child, Value::Array(_) | Value::Object(_)) && depth >= MAX_DEPTH {
                return Err(SessionError::invalid_request(format!(
                    "request nests deeper than {MAX_DEPTH} levels"
                )));
            }
            stack.push((child, depth + 1));
        }
    }
    Ok(may_hold_a_long_id)
}

fn check_id(path: &[&str], id: &str) -> Result<()> {
    let encoded = enc_len(id);
    if encoded > MAX_ID_BYTES {
        return Err(SessionError::invalid_request(format!(
            "{} is too long: {encoded} bytes file-name encoded, the limit is {MAX_ID_BYTES}",
            path.join(".")
        )));
    }
    Ok(())
}

/// The value at `path` (object keys from the top), if every step is an object holding the key.
fn at<'a>(payload: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(payload, |value, key| value.get(key))
}

fn check_ids(payload: &Value) -> Result<()> {
    for path in ID_PATHS {
        if let Some(Value::String(id)) = at(payload, path) {
            check_id(path, id)?;
        }
    }
    for path in ID_LIST_PATHS {
        if let Some(Value::Array(items)) = at(payload, path) {
            for id in items.iter().filter_map(Value::as_str) {
                check_id(path, id)?;
            }
        }
    }
    Ok(())
}

/// Drops a value of any depth without recursion: children are moved out before their parent goes.
pub fn drop_flat(value: Value) {
    let mut stack = alloc::vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Checks a cursor's length before it is decoded.
pub fn check_cursor(cursor: &str) -> Result<()> {
    if cursor.len() > MAX_CURSOR_BYTES {
        return Err(SessionError::invalid_cursor(format!(
            "cursor is longer than {MAX_CURSOR_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Builds `{"k": {"k": … {}}}` nested `depth` levels deep, without recursion (for tests).
pub fn nested_object(key: &str, depth: usize) -> Value {
    let mut value = Value::Object(serde_json::Map::new());
    for _ in 1..depth {
        let mut map = serde_json::Map::new();
        map.insert(key.into(), value);
        value = Value::Object(map);
    }
    value
}

#[cfg(test)]
mod tests;

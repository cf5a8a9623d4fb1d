//! Files that are a list of JSON objects, as OpenAI items and UIMessages are (a JSON array, or
//! JSONL): their objects numbered for errors, the first one (what `looks_like` tests), and the
//! entry id each object reads into.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;
use core::fmt;
use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde_json::Value;

use super::{FormatError, Source};
use crate::wire::Object;

/// The objects of a JSON array (numbered by 1-based item) or of JSONL (numbered by line).
pub fn json_items(source: &Source<'_>) -> Result<Vec<(usize, Object)>, FormatError> {
    let first = source.bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err(FormatError::whole(format!("{} is empty", source.name))),
        Some(b'[') => array_items(source.bytes),
        Some(_) => jsonl_items(source),
    }
}

fn array_items(bytes: &[u8]) -> Result<Vec<(usize, Object)>, FormatError> {
    let parsed = Cell::new(0usize);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let values = deserializer
        .deserialize_seq(CountingSeq { parsed: &parsed })
        .and_then(|values| deserializer.end().map(|()| values))
        .map_err(|e| {
            FormatError::at(
                parsed.get() + 1,
                format!("item {} (text line {}) is not JSON: {e}", parsed.get() + 1, e.line()),
            )
        })?;
    values.into_iter().enumerate().map(|(i, value)| numbered_object(i + 1, value)).collect()
}

/// Deserializes a JSON array's values, counting the ones read so that an error names its item.
struct CountingSeq<'a> {
    parsed: &'a Cell<usize>,
}

impl<'de> Visitor<'de> for CountingSeq<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = seq.next_element::<Value>()? {
            values.push(value);
            self.parsed.set(values.len());
        }
        Ok(values)
    }
}

fn jsonl_items(source: &Source<'_>) -> Result<Vec<(usize, Object)>, FormatError> {
    source
        .lines()
        .map(|(line, bytes)| {
            let value = serde_json::from_slice::<Value>(bytes)
                .map_err(|e| FormatError::at(line, format!("not a JSON line: {e}")))?;
            numbered_object(line, value)
        })
        .collect()
}

fn numbered_object(line: usize, value: Value) -> Result<(usize, Object), FormatError> {
    match value {
        Value::Object(object) => Ok((line, object)),
        other => Err(FormatError::at(line, format!("not a JSON object: {other}"))),
    }
}

/// The first object of a JSON array or JSONL (`None` when there is none that parses).
pub fn first_object(bytes: &[u8]) -> Option<Object> {
    let text = core::str::from_utf8(bytes).ok()?;
    let trimmed = text.trim_start();
    let value: Value = if trimmed.starts_with('[') {
        serde_json::from_str::<Vec<Value>>(trimmed).ok()?.into_iter().next()?
    } else {
        let line = trimmed.lines().next()?;
        serde_json::from_str(line).ok()?
    };
    match value {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// The entry id of the object at `index`: its own id (`hint`) when it has an unused one, else
/// `<prefix>_<index>` (made unique); the id is marked used.
pub fn unique_id(
    prefix: &str,
    hint: Option<&str>,
    index: usize,
    used: &mut BTreeSet<String>,
) -> String {
    let id = fresh_id(prefix, hint, index, used);
    used.insert(id.clone());
    id
}

/// The id [`unique_id`] gives next, without taking it.
pub fn fresh_id(prefix: &str, hint: Option<&str>, index: usize, used: &BTreeSet<String>) -> String {
    let mut id = match hint {
        Some(hint) if !hint.is_empty() && !used.contains(hint) => hint.to_string(),
        _ => format!("{prefix}_{index}"),
    };
    let mut n = 1;
    while used.contains(&id) {
        id = format!("{prefix}_{index}_{n}");
        n += 1;
    }
    id
}

//! A replayer of session logs with the original v1.0.32's rules (contract §5.4, read literally),
//! written from the contract alone and sharing nothing with session-core's replay: JSON values,
//! the five record types of §5.3, every other line skipped as v1.0.32 skips it (our `begin`
//! markers, old `group` lines and `settle` included). Tests use it to show that v1.0.32 rebuilds
//! the state we rebuild from the files we write.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use session_core::record::SessionState;

/// The state of §5.4, as JSON values.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct V1State {
    pub meta: Option<Value>,
    pub entries: BTreeMap<String, Value>,
    pub leaf: Option<String>,
    pub committed: BTreeSet<String>,
    pub pending_legacy_append: bool,
    /// Lines skipped "with a warning".
    pub skipped: usize,
}

enum V1Record {
    Meta(Value),
    Entry(String, Value),
    Leaf(Option<String>),
    Append(String, Value, Value),
    Commit(String),
}

/// A `SessionEntry`'s shape as far as these rules need it: an id, a parent (string or null), a
/// timestamp, and the `message` or `custom_type` its `kind` calls for.
fn entry_of(value: Option<&Value>) -> Option<(String, Value)> {
    let entry = value.filter(|v| v.is_object())?;
    let id = entry.get("id")?.as_str()?.to_owned();
    entry.get("timestamp")?.as_i64()?;
    let body = match entry.get("kind")?.as_str()? {
        "message" => entry.get("message")?.get("role")?.is_string(),
        "custom" => entry.get("custom_type")?.is_string(),
        _ => false,
    };
    match entry.get("parent_id") {
        None | Some(Value::Null) | Some(Value::String(_)) if body => Some((id, entry.clone())),
        _ => None,
    }
}

/// A `SessionMeta`'s shape as far as these rules need it.
fn meta_of(value: Option<&Value>) -> Option<Value> {
    let meta = value.filter(|v| v.is_object())?;
    meta.get("session_id")?.as_str()?;
    meta.get("created_at")?.as_i64()?;
    meta.get("updated_at")?.as_i64()?;
    meta.get("message_count")?.as_u64()?;
    Some(meta.clone())
}

/// One of the five records, or `None`: "malformed JSON, unknown `type`, wrong shape, truncated".
fn parse(line: &[u8]) -> Option<V1Record> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let object = value.as_object()?;
    match object.get("type")?.as_str()? {
        "meta" => Some(V1Record::Meta(meta_of(object.get("meta"))?)),
        "entry" => {
            let (id, entry) = entry_of(object.get("entry"))?;
            Some(V1Record::Entry(id, entry))
        }
        "leaf" => match object.get("entry_id") {
            None | Some(Value::Null) => Some(V1Record::Leaf(None)),
            Some(Value::String(id)) => Some(V1Record::Leaf(Some(id.clone()))),
            Some(_) => None,
        },
        "append" => {
            let (id, entry) = entry_of(object.get("entry"))?;
            Some(V1Record::Append(id, entry, meta_of(object.get("meta"))?))
        }
        "commit" => Some(V1Record::Commit(object.get("entry_id")?.as_str()?.to_owned())),
        _ => None,
    }
}

impl V1State {
    /// "walk from `leaf` up through `parent_id`, inserting each id into `committed`, stopping at
    /// the first id already committed or when the chain ends".
    fn mark_active_path_committed(&mut self) {
        let mut cursor = self.leaf.clone();
        while let Some(id) = cursor {
            if !self.committed.insert(id.clone()) {
                break;
            }
            cursor = self
                .entries
                .get(&id)
                .and_then(|e| e.get("parent_id"))
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
    }

    fn apply(&mut self, record: V1Record) {
        match record {
            V1Record::Meta(meta) => {
                self.meta = Some(meta);
                if self.pending_legacy_append {
                    self.mark_active_path_committed();
                    self.pending_legacy_append = false;
                }
            }
            V1Record::Entry(id, entry) => {
                self.entries.insert(id, entry);
            }
            V1Record::Leaf(id) => {
                self.leaf = id;
                self.pending_legacy_append = true;
            }
            V1Record::Append(id, entry, meta) => {
                self.entries.insert(id.clone(), entry);
                self.leaf = Some(id.clone());
                self.meta = Some(meta);
                self.committed.insert(id);
                self.pending_legacy_append = false;
            }
            V1Record::Commit(id) => {
                self.committed.insert(id);
            }
        }
    }
}

/// Replays a log line by line with v1.0.32's rules.
pub fn replay(bytes: &[u8]) -> V1State {
    let mut state = V1State::default();
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse(line) {
            Some(record) => state.apply(record),
            None => state.skipped += 1,
        }
    }
    state
}

/// Why v1.0.32's state is not `ours` (meta, entries, leaf, committed), or `None` when it is.
pub fn differs(v1: &V1State, ours: &SessionState) -> Option<String> {
    let meta = ours.meta.as_ref().map(|m| serde_json::to_value(m).expect("meta serializes"));
    if v1.meta != meta {
        return Some(format!("meta: v1 {:?}, ours {:?}", v1.meta, meta));
    }
    let entries: BTreeMap<String, Value> = ours
        .entries
        .iter()
        .map(|(id, e)| (id.clone(), serde_json::to_value(e).expect("entry serializes")))
        .collect();
    if v1.entries != entries {
        return Some(format!("entries: v1 {:?}, ours {:?}", v1.entries, entries));
    }
    if v1.leaf != ours.leaf {
        return Some(format!("leaf: v1 {:?}, ours {:?}", v1.leaf, ours.leaf));
    }
    if v1.committed != ours.committed {
        return Some(format!("committed: v1 {:?}, ours {:?}", v1.committed, ours.committed));
    }
    None
}

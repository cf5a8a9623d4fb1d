//! pi coding agent's session JSONL, both ways: a `session` header line, then a tree of entries
//! by `id` / `parentId` whose last line is pi's active leaf. `architecture/formats/pi.md` says
//! what maps to what, what each side cannot hold and how the stash makes a pi file read and
//! written back unchanged. This file holds what every operation uses (the stash, small readers
//! of JSON objects) and [`looks_like`]; [`read`], [`write()`] and [`kept`] have a file each.

mod kept;
mod kind;
mod patch;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use kept::kept;
pub use read::read;
pub use write::write;

use alloc::string::String;
use serde_json::{Map, Value};

use self::kind::{written_kind, Kind};
use self::patch::Patch;
use crate::formats::{stashed, Format, Source};
use crate::wire::SessionEntry;

/// The session version this module writes.
const VERSION: u64 = 3;

/// The fields every pi entry line has, besides what its `type` adds.
const ENTRY_KEYS: [&str; 4] = ["type", "id", "parentId", "timestamp"];

/// The `custom_type` of the custom message a `bashExecution` message reads into.
const BASH_EXECUTION: &str = "bash_execution";

/// The `custom_type` of the custom message a `branch_summary` entry reads into.
const BRANCH_SUMMARY: &str = "branch_summary";

/// The `custom_type` of the custom entry a `session_info` entry reads into.
const SESSION_INFO: &str = "session_info";

/// What an entry's origin keeps of pi (`origin.pi`): the line's kind when it is not the one the
/// entry would be written as, whether its content was a plain string, and the JSON-pointer
/// patch from the line this module writes to the line pi had.
#[derive(Debug, Default, Clone, PartialEq)]
struct Stash {
    kind: Option<Kind>,
    string_content: bool,
    patch: Patch,
}

impl Stash {
    fn of(entry: &SessionEntry) -> Stash {
        let Some(Value::Object(pi)) = stashed(Format::Pi, entry) else { return Stash::default() };
        Stash {
            kind: pi.get("kind").and_then(Value::as_str).map(Kind::parse),
            string_content: pi.get("content").and_then(Value::as_str) == Some("string"),
            patch: Patch::of(pi),
        }
    }

    fn to_value(&self) -> Value {
        let mut pi = Map::new();
        if let Some(kind) = &self.kind {
            pi.insert("kind".into(), Value::String(kind.name()));
        }
        if self.string_content {
            pi.insert("content".into(), Value::String("string".into()));
        }
        self.patch.put(&mut pi);
        Value::Object(pi)
    }
}

/// Whether `bytes` look like a pi session: the first non-blank line is an object with
/// `"type":"session"` and a string `id`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let source = Source { name: "", bytes, modified: 0 };
    let Some((_, first)) = source.lines().next() else { return false };
    match serde_json::from_slice::<Value>(first) {
        Ok(Value::Object(header)) => {
            header.get("type").and_then(Value::as_str) == Some("session")
                && header.get("id").is_some_and(Value::is_string)
        }
        _ => false,
    }
}

/// The string at `key` ("" when there is none).
fn str_at<'a>(object: &'a Map<String, Value>, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

fn object_at<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    object.get(key).and_then(Value::as_object)
}

/// The session's title as pi names it: the last `session_info` entry with a non-empty name.
fn title_of(entries: &[SessionEntry]) -> String {
    entries
        .iter()
        .rev()
        .filter(|entry| written_kind(entry) == Kind::Spread(SESSION_INFO.into()))
        .find_map(|entry| match entry {
            SessionEntry::Custom { data, .. } => {
                data.get("name").and_then(Value::as_str).filter(|name| !name.is_empty())
            }
            SessionEntry::Message { .. } => None,
        })
        .map(String::from)
        .unwrap_or_default()
}

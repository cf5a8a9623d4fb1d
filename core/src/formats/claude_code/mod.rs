//! Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`) both ways: one
//! line is one entry, and what a line holds beyond the entry read from it is kept in the entry's
//! origin as a patch against the line this module would write for that entry, so a transcript
//! read and written back gives the same JSON values line for line.
//! `architecture/formats/claude-code.md` says what maps to what and what is lost. This file
//! holds the names every operation uses and [`looks_like`]; [`read`], [`write()`], [`kept`] and
//! the origin's patch have a file each.

mod kept;
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

use crate::formats::{Format, Source};

const FORMAT: Format = Format::ClaudeCode;
/// The `subtype` of the system line Claude Code writes where it compacted.
const BOUNDARY: &str = "compact_boundary";
/// Line types that read as messages or titles: a custom entry of one of these types is written
/// as `custom:<type>`.
const RESERVED: [&str; 4] = ["user", "assistant", "system", "summary"];
const ESCAPE: &str = "custom:";
/// The keys of a line that a custom entry's id, parent, time and type fill.
const ENVELOPE: [&str; 5] = ["type", "uuid", "parentUuid", "sessionId", "timestamp"];
/// How many of the first lines [`looks_like`] tries.
const LOOK_AHEAD: usize = 5;

type Line = Map<String, Value>;

/// Whether `bytes` look like a Claude Code transcript: one of the first lines is a message line
/// (`sessionId` with `uuid` or `parentUuid`) or a `summary` with a `leafUuid`.
pub fn looks_like(bytes: &[u8]) -> bool {
    let source = Source { name: "", bytes, modified: 0 };
    for (_, line) in source.lines().take(LOOK_AHEAD) {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(map)) if is_claude_code_line(&map) => return true,
            Ok(Value::Object(_)) => {}
            _ => return false,
        }
    }
    false
}

fn is_claude_code_line(map: &Line) -> bool {
    let message_line = map.contains_key("sessionId")
        && (map.contains_key("uuid") || map.contains_key("parentUuid"));
    let title_line = text_of(map, "type") == Some("summary") && map.contains_key("leafUuid");
    message_line || title_line
}

fn text_of<'a>(map: &'a Line, key: &str) -> Option<&'a str> {
    map.get(key)?.as_str()
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

//! The JSONL session-log codec (contract §5.2–§5.4, §10 D6/D8): record ⇄ line, the crash-atomic
//! `group` line, tolerant replay through [`SessionState::apply`], tail repair and the filename
//! encoding of session ids. `no_std` so the browser host replays exported files with the same rules.
//!
//! # The `group` line (crash atomicity of multi-record mutations)
//!
//! A change set that produces one record is written as that record's plain line, byte-compatible
//! with v1.0.32. A change set that produces several (`append-many`, `fork`, `update-message`, …)
//! is written as **one** line:
//!
//! ```json
//! {"type":"group","records":[{"type":"entry",…},{"type":"leaf",…},{"type":"meta",…}]}
//! ```
//!
//! A line is the unit a crash can tear, and a torn line never parses, so the group lands all or
//! nothing with no extra framing, no length prefix and no recovery pass beyond the tail repair
//! every reader already does. A group whose inner records do not all parse is skipped whole.
//!
//! Why not a header line followed by N plain lines (which v1.0.32 would read record by record)?
//! Because then a torn group is only recognisable by counting, the tail repair must learn to cut a
//! whole group, and an old reader would apply half a group after a crash — exactly the failure D8
//! forbids. With one line, a v1.0.32 reader skips the group as one malformed line: it misses the
//! mutation entirely but never sees half of it, the same degradation the seed already documents
//! for `append` / `commit` records (do not roll back to an older build).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::record::{Record, SessionState};

/// Counters of one replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Non-blank lines seen (terminated or not).
    pub lines: usize,
    /// Lines that were not a valid record or group (malformed, unknown type, torn tail).
    pub skipped: usize,
}

/// What must happen to the end of a log before the next append (contract §5.5 tail repair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailRepair {
    /// Empty or ends with `\n`: append as is.
    None,
    /// The last line is unterminated but valid: write a `\n` first.
    Newline,
    /// The last line is an unterminated fragment that does not parse: truncate to this length.
    Truncate(usize),
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Blank or whitespace only.
    Blank,
    /// A plain record (one) or a group (several), to apply in order.
    Records(Vec<Record>),
    /// Not a record: malformed, unknown type, wrong shape or torn.
    Invalid,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename = "group")]
struct GroupRef<R> {
    records: R,
}

/// Encodes one record as a line (JSON + `\n`).
pub fn encode_record(record: &Record) -> Vec<u8> {
    let mut out = serde_json::to_vec(record).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Encodes the records of one change set as one line: the plain record when there is one, a
/// `group` line when there are several, nothing when there are none.
pub fn encode_records(records: &[Record]) -> Vec<u8> {
    match records {
        [] => Vec::new(),
        [one] => encode_record(one),
        many => {
            let mut out = serde_json::to_vec(&GroupRef { records: many }).unwrap_or_default();
            out.push(b'\n');
            out
        }
    }
}

/// Encodes a whole state as snapshot lines ([`SessionState::snapshot_records`]), as written by
/// rewrites and compaction.
pub fn encode_snapshot(state: &SessionState) -> Vec<u8> {
    let mut out = Vec::new();
    for record in &state.snapshot_records() {
        out.extend_from_slice(&encode_record(record));
    }
    out
}

/// Parses one line (without its `\n`).
pub fn parse_line(line: &[u8]) -> Line {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Blank;
    }
    if let Ok(record) = serde_json::from_slice::<Record>(line) {
        return Line::Records(alloc::vec![record]);
    }
    match serde_json::from_slice::<GroupRef<Vec<Record>>>(line) {
        Ok(group) => Line::Records(group.records),
        Err(_) => Line::Invalid,
    }
}

/// Replays a whole log from nothing.
pub fn replay(bytes: &[u8]) -> (SessionState, ReplayStats) {
    let mut state = SessionState::default();
    let stats = replay_into(&mut state, bytes);
    (state, stats)
}

/// Applies every line of `bytes` to `state`, in order. Blank lines are ignored; invalid lines
/// (including a torn last line) are skipped and counted.
pub fn replay_into(state: &mut SessionState, bytes: &[u8]) -> ReplayStats {
    let mut stats = ReplayStats::default();
    for line in bytes.split(|b| *b == b'\n') {
        match parse_line(line) {
            Line::Blank => {}
            Line::Records(records) => {
                stats.lines += 1;
                for record in &records {
                    state.apply(record);
                }
            }
            Line::Invalid => {
                stats.lines += 1;
                stats.skipped += 1;
            }
        }
    }
    stats
}

/// Decides the tail repair for a log whose content is `bytes` (only its last line matters).
pub fn tail_repair(bytes: &[u8]) -> TailRepair {
    match bytes.last() {
        None | Some(b'\n') => TailRepair::None,
        Some(_) => {
            let start = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            match parse_line(&bytes[start..]) {
                Line::Records(_) => TailRepair::Newline,
                Line::Blank | Line::Invalid => TailRepair::Truncate(start),
            }
        }
    }
}

/// The meta a full replay of `bytes` would end with, found by scanning lines backwards: only
/// `meta`, `append` and groups holding them set it, and the last one wins.
pub fn last_meta(bytes: &[u8]) -> Option<crate::wire::SessionMeta> {
    for line in bytes.rsplit(|b| *b == b'\n') {
        // Cheap prefilter: a line that cannot mention a meta is not parsed. A JSON escape can
        // spell the key or the tag without the literal text, so such lines are parsed too.
        if !contains(line, b"\"meta\"") && !contains(line, b"\\u") {
            continue;
        }
        if let Line::Records(records) = parse_line(line) {
            let found = records.iter().rev().find_map(|r| match r {
                Record::Meta { meta } | Record::Append { meta, .. } => Some(meta.clone()),
                _ => None,
            });
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn keep(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// Filename encoding of contract §5.2: bytes in `[A-Za-z0-9._-]` kept, every other byte `%XX`
/// (uppercase hex).
pub fn enc(id: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(id.len());
    for &b in id.as_bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
    }
    out
}

/// Strict inverse of [`enc`]: `%` must be followed by two hex digits (either case), every other
/// byte must be one `enc` keeps, and the result must be UTF-8. `None` otherwise.
pub fn dec(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = hex_value(*bytes.get(i + 1)?)?;
            let lo = hex_value(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else if keep(b) {
            out.push(b);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Name of a session's attachment folder: `enc(id)`, except that the names `enc` can produce but
/// a path cannot hold safely (``, `.`, `..`) become `%`, `%2E`, `%2E%2E`. `enc` never outputs those,
/// so no two ids share a folder, and no id can name the `attachments/` folder or its parent.
pub fn attachment_dir_name(session_id: &str) -> String {
    let name = enc(session_id);
    match name.as_str() {
        "" => String::from("%"),
        "." => String::from("%2E"),
        ".." => String::from("%2E%2E"),
        _ => name,
    }
}

/// Inverse of [`attachment_dir_name`].
pub fn attachment_dir_session(name: &str) -> Option<String> {
    match name {
        "%" => Some(String::new()),
        "%2E" => Some(String::from(".")),
        "%2E%2E" => Some(String::from("..")),
        _ => dec(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enc_dec_round_trip() {
        let id = "../escape/chat 42:?";
        assert_eq!(enc(id), "..%2Fescape%2Fchat%2042%3A%3F");
        assert_eq!(dec(&enc(id)).as_deref(), Some(id));
        assert_eq!(dec("%2f").as_deref(), Some("/"));
        assert_eq!(dec("%2"), None);
        assert_eq!(dec("a b"), None);
        assert_eq!(dec("%FF"), None);
    }

    #[test]
    fn torn_tail_is_truncated() {
        assert_eq!(
            tail_repair(b"{\"type\":\"leaf\",\"entry_id\":null}\n{\"ty"),
            TailRepair::Truncate(32)
        );
        assert_eq!(tail_repair(b"{\"type\":\"leaf\",\"entry_id\":null}"), TailRepair::Newline);
        assert_eq!(tail_repair(b""), TailRepair::None);
    }
}

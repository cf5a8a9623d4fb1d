//! The JSONL session-log codec (contract §5.2–§5.4, §10 D6/D8): record ⇄ line, the crash-atomic
//! framing of multi-record change sets (`begin` markers), tolerant replay through
//! [`SessionState::apply`], tail repair and the filename encoding of session ids. `no_std` so the
//! browser host replays exported files with the same rules.
//!
//! # Change sets: plain lines, framed by a `begin` marker
//!
//! A change set that produces one record is written as that record's plain line, byte-compatible
//! with v1.0.32. A change set that produces several (`append-many`, `fork`, `update-message`,
//! `delete-attachment` + draft, …) is written as a marker line followed by its records, each on
//! its own plain line, in one `write`:
//!
//! ```json
//! {"type":"begin","lines":3}
//! {"type":"entry","entry":{…}}
//! {"type":"leaf","entry_id":"e_2"}
//! {"type":"meta","meta":{…}}
//! ```
//!
//! Rules (this replay; [`walk`] is the one implementation):
//!
//! * a line is a record or a marker only as a JSON object with its `type` tag; anything else
//!   (an array, a marker's shape without its tag) is a malformed line, skipped;
//! * a `begin` marker opens a group of the next `lines` non-blank lines; the group is applied,
//!   record by record, once its last line is read;
//! * a group that is not complete when the next `begin` marker or the end of the file comes is
//!   dropped whole (marker and members). A torn write can only leave one at the end of the file,
//!   and [`tail_repair`] then cuts the file back to the marker (and any dropped groups right
//!   before it) before the next append, so no later record ever follows half a group;
//! * a torn last fragment (unterminated and unparseable) is not a line: it never completes a group;
//! * a member line that is not a record is skipped (as any malformed line), the rest of its group
//!   still applies: only a crash can make a group partial, and a crash only tears the end.
//!
//! v1.0.32 skips the marker as an unknown `type` (one "malformed line" warning) and applies the
//! plain records in the same order with the same rules, so it rebuilds the same meta, entries,
//! leaf and committed set. The one thing it cannot do is drop a torn group: a file cut by a crash
//! inside a group and read by v1.0.32 before this build appended to it again gets the group's
//! complete lines applied (`session-manager export` writes the repaired file).
//!
//! Why a count in the opening marker and no closing marker: one extra line per group instead of
//! two, and the group's extent is exact, so lines appended after a torn group by a build that
//! ignores markers (v1.0.32, after a downgrade) complete it as v1.0.32 applied them, instead of
//! being swallowed by a group waiting for its end. Why not one line per change set (the earlier
//! `{"type":"group","records":[…]}`, still read): v1.0.32 skips such a line whole, so a downgrade
//! silently lost every multi-record mutation.
//!
//! Files written before this format keep replaying as before: `group` lines, legacy three-line
//! appends, `append`, `commit` and `settle` records.

use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use crate::record::{Record, SessionState};

/// Counters of one replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Non-blank lines seen (terminated or not), `begin` markers included.
    pub lines: usize,
    /// Lines not applied: not a valid record or marker (malformed, unknown type, torn tail), or
    /// part of a dropped incomplete group (its marker and members).
    pub skipped: usize,
}

/// What must happen to the end of a log before the next append (contract §5.5 tail repair,
/// extended to groups).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TailRepair {
    /// Empty or ends with `\n`: append as is.
    #[default]
    None,
    /// The last line is unterminated but valid: write a `\n` first.
    Newline,
    /// The log ends with a torn fragment or an incomplete group: truncate to this length (the
    /// fragment's start, or the start of the group's `begin` line).
    Truncate(usize),
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Blank or whitespace only.
    Blank,
    /// A plain record (one) or an old `group` line (several), to apply in order.
    Records(Vec<Record>),
    /// A `begin` marker: the next this many non-blank lines are one change set.
    Begin(usize),
    /// Not a record: malformed, unknown type, wrong shape or torn.
    Invalid,
}

crate::internally_tagged! {
tag = "type", rename_all = "snake_case", remote = "Framing";
/// The lines that frame records, tagged as records are (an enum, so the tag is required: a
/// tagged struct would also read `{"lines":3}` or `[3]`).
#[derive(Serialize)]
enum Framing {
    /// Opens a group of the next `lines` plain record lines.
    Begin { lines: usize },
    /// The one-line group of earlier builds, still read.
    Group { records: Vec<Record> },
}
}

/// Encodes one record as a line (JSON + `\n`).
pub fn encode_record(record: &Record) -> Vec<u8> {
    let mut out = serde_json::to_vec(record).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Encodes the records of one change set: the plain line when there is one, a `begin` marker
/// followed by one plain line per record when there are several, nothing when there are none.
pub fn encode_records(records: &[Record]) -> Vec<u8> {
    match records {
        [] => Vec::new(),
        [one] => encode_record(one),
        many => {
            let mut out =
                serde_json::to_vec(&Framing::Begin { lines: many.len() }).unwrap_or_default();
            out.push(b'\n');
            for record in many {
                out.extend_from_slice(&encode_record(record));
            }
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
    let Some(first) = line.iter().find(|b| !b.is_ascii_whitespace()) else {
        return Line::Blank;
    };
    // A record is a JSON object (§5.4: any other shape is skipped, as v1.0.32 skips a line that
    // has no `type`); serde would also read a tagged enum from an array.
    if *first != b'{' {
        return Line::Invalid;
    }
    if let Ok(record) = serde_json::from_slice::<Record>(line) {
        return Line::Records(alloc::vec![record]);
    }
    match serde_json::from_slice::<Framing>(line) {
        Ok(Framing::Begin { lines }) => Line::Begin(lines),
        Ok(Framing::Group { records }) => Line::Records(records),
        Err(_) => Line::Invalid,
    }
}

/// Replays a whole log from nothing.
pub fn replay(bytes: &[u8]) -> (SessionState, ReplayStats) {
    let (state, stats, _) = replay_with_repair(bytes);
    (state, stats)
}

/// Replays a whole log from nothing and says how its tail must be repaired before the next
/// append (what [`tail_repair`] returns), in the same pass.
pub fn replay_with_repair(bytes: &[u8]) -> (SessionState, ReplayStats, TailRepair) {
    let mut state = SessionState::default();
    let (stats, repair) = walk(bytes, |_, records| {
        for record in records {
            state.apply(record);
        }
    });
    (state, stats, repair)
}

/// Applies every change set of `bytes` to `state`, in order. Blank lines are ignored; invalid
/// lines (including a torn last line) and incomplete groups are skipped and counted.
pub fn replay_into(state: &mut SessionState, bytes: &[u8]) -> ReplayStats {
    walk(bytes, |_, records| {
        for record in records {
            state.apply(record);
        }
    })
    .0
}

/// An open group while walking.
#[derive(Debug)]
struct Open {
    /// Byte offset of its `begin` line.
    start: usize,
    /// Member lines still to come.
    missing: usize,
    records: Vec<Record>,
    /// Where each of `records` came from: its line's byte offset and length.
    spans: Vec<(usize, usize)>,
    /// The first member's 1-based line number.
    first_line: usize,
    /// Lines that dropping the group would skip (the marker and its valid members).
    lines: usize,
}

/// Whether [`ReplayedChangeSet::spans`] are kept (feature `spans`, which the fs store's stubs need; the
/// browser build leaves them out of its bundle).
const SPANS: bool = cfg!(feature = "spans");

/// A change set as replay applies it.
#[derive(Debug, Clone, Copy)]
pub struct ReplayedChangeSet<'a> {
    /// 1-based line number of its first record line (a plain line is a change set of its own).
    pub line: usize,
    pub records: &'a [Record],
    /// Byte offset and length (without the `\n`) of the line each record was read from; empty
    /// without feature `spans`.
    pub spans: &'a [(usize, usize)],
}

/// The replay rules of this module, once, fed line by line (so a host can replay a file without
/// holding it whole): [`Walker::line`] for every piece between `\n`s, then [`Walker::finish`].
#[derive(Debug, Default)]
pub struct Walker {
    stats: ReplayStats,
    repair: TailRepair,
    open: Option<Open>,
    // Start of the dropped groups right before the open one: the repair cuts them too, else the
    // next append would complete none of them and be dropped with them.
    dropped_since: Option<usize>,
    /// Lines and bytes read so far.
    index: usize,
    start: usize,
}

impl Walker {
    /// Starts a walk at byte `offset` of a file (spans and repairs count from the file's start).
    pub fn at(offset: usize) -> Walker {
        Walker { start: offset, ..Walker::default() }
    }

    /// Reads one piece of the file: the bytes up to a `\n` (`terminated`) or the end of the file.
    /// Hands every change set that completes to `apply`.
    pub fn line(
        &mut self,
        piece: &[u8],
        terminated: bool,
        apply: &mut dyn FnMut(ReplayedChangeSet<'_>),
    ) {
        let at = self.start;
        let index = self.index;
        self.index += 1;
        self.start += piece.len() + 1;
        let line = parse_line(piece);
        if !terminated && !piece.is_empty() {
            self.repair = match line {
                Line::Blank | Line::Invalid => TailRepair::Truncate(at),
                Line::Records(_) | Line::Begin(_) => TailRepair::Newline,
            };
        }
        if matches!(line, Line::Blank) {
            return;
        }
        self.stats.lines += 1;
        match line {
            Line::Blank => {}
            Line::Begin(lines) => {
                if let Some(dropped) = self.open.take() {
                    self.stats.skipped += dropped.lines;
                    self.dropped_since.get_or_insert(dropped.start);
                }
                self.open = Some(Open {
                    start: at,
                    missing: lines,
                    records: Vec::new(),
                    spans: Vec::new(),
                    first_line: index + 2,
                    lines: 1,
                });
            }
            Line::Records(records) => match &mut self.open {
                Some(group) => {
                    if SPANS {
                        group.spans.extend(records.iter().map(|_| (at, piece.len())));
                    }
                    group.records.extend(records);
                    group.missing = group.missing.saturating_sub(1);
                    group.lines += 1;
                }
                None if !SPANS => {
                    apply(ReplayedChangeSet { line: index + 1, records: &records, spans: &[] })
                }
                None => {
                    let spans: Vec<(usize, usize)> =
                        records.iter().map(|_| (at, piece.len())).collect();
                    apply(ReplayedChangeSet { line: index + 1, records: &records, spans: &spans });
                }
            },
            Line::Invalid => {
                self.stats.skipped += 1;
                // A torn fragment is not a line: it never completes a group.
                if let Some(group) = self.open.as_mut().filter(|_| terminated) {
                    group.missing = group.missing.saturating_sub(1);
                }
            }
        }
        if let Some(group) = self.open.take_if(|g| g.missing == 0) {
            let spans = if SPANS { &group.spans[..] } else { &[] };
            apply(ReplayedChangeSet { line: group.first_line, records: &group.records, spans });
            self.dropped_since = None;
        }
    }

    /// The counters and the tail repair, once every piece was read.
    pub fn finish(mut self) -> (ReplayStats, TailRepair) {
        if let Some(dropped) = self.open.take() {
            self.stats.skipped += dropped.lines;
            self.repair = TailRepair::Truncate(self.dropped_since.unwrap_or(dropped.start));
        }
        (self.stats, self.repair)
    }
}

/// The replay rules of this module over a whole file ([`Walker`]): hands every change set replay
/// applies to `apply`, in order, with the 1-based line number of its first record line, and
/// returns the counters and the tail repair.
pub fn walk(bytes: &[u8], mut apply: impl FnMut(usize, &[Record])) -> (ReplayStats, TailRepair) {
    let mut walker = Walker::default();
    let mut start = 0;
    for piece in bytes.split(|b| *b == b'\n') {
        start += piece.len() + 1;
        walker.line(piece, start <= bytes.len(), &mut |set| apply(set.line, set.records));
    }
    walker.finish()
}

/// Decides the tail repair for a log whose content is `bytes`: cut an incomplete trailing group
/// back to its `begin` line (or to the first of the dropped groups that directly precede it), or
/// a torn fragment back to its start, or terminate a valid last line. What it cuts replay drops
/// anyway, and a record appended after the cut is applied.
pub fn tail_repair(bytes: &[u8]) -> TailRepair {
    walk(bytes, |_, _| {}).1
}

/// How the lifecycle records (`trash`, `restore`, `expiry`) begin: the tag is the first key
/// of every record line, and a quote inside a JSON string is escaped, so only a record (or an
/// object nested in an entry, which only costs a replay) holds one of these.
pub const LIFECYCLE_TAGS: [&[u8]; 3] =
    [br#"{"type":"trash""#, br#"{"type":"restore""#, br#"{"type":"expiry""#];

/// Whether `bytes` may hold a lifecycle record: only a log that does needs a full replay to
/// tell its session's lifecycle (its meta is known from its tail, [`last_meta_in_tail`]).
pub fn may_hold_lifecycle(bytes: &[u8]) -> bool {
    LIFECYCLE_TAGS.iter().any(|tag| contains(bytes, tag))
}

/// The meta a full replay of `bytes` would end with, found by scanning lines backwards: only
/// `meta`, `append` and groups holding them set it, the last applied one wins.
pub fn last_meta(bytes: &[u8]) -> Option<crate::wire::SessionMeta> {
    let (decided, first_region) = scan_meta_back(bytes);
    decided.or(first_region)
}

/// [`last_meta`] of a whole log, known from its tail alone (a suffix that starts at a line
/// start): `None` when the tail does not decide it (no meta in it, or its last meta comes before
/// its first `begin` marker, where only earlier lines tell whether it is part of a dropped group).
pub fn last_meta_in_tail(tail: &[u8]) -> Option<crate::wire::SessionMeta> {
    scan_meta_back(tail).0
}

/// Backwards over the regions a log's `begin` markers cut it into: a region (a marker and the
/// lines up to the next one) applies whole when it holds the marker's count of lines, else it is
/// dropped whole; the region before the first marker always applies. Returns the last meta of an
/// applied region that starts with a marker, or else the last meta of the first region.
fn scan_meta_back(
    bytes: &[u8],
) -> (Option<crate::wire::SessionMeta>, Option<crate::wire::SessionMeta>) {
    let mut candidate = None;
    let mut lines_after = 0usize;
    for (index, piece) in bytes.rsplit(|b| *b == b'\n').enumerate() {
        let unterminated = index == 0;
        if piece.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Cheap prefilter: a line that cannot be a marker or hold a meta is only counted. A meta
        // comes from a `meta` record (its tag) or an `append` (its tag; an array-form member of
        // an old group line has no `"meta"` key), a marker needs its `begin` tag, and only a
        // `\u` escape spells a letter otherwise, so such lines are parsed too.
        let worth_parsing = unterminated
            || contains(piece, b"\"meta\"")
            || contains(piece, b"\"append\"")
            || contains(piece, b"begin")
            || contains(piece, b"\\u");
        match if worth_parsing { parse_line(piece) } else { Line::Invalid } {
            Line::Blank => {}
            Line::Invalid if unterminated => {} // a torn fragment is not a line
            Line::Invalid => lines_after += 1,
            Line::Records(records) => {
                lines_after += 1;
                if candidate.is_none() {
                    candidate = records.iter().rev().find_map(|r| match r {
                        Record::Meta { meta } | Record::Append { meta, .. } => Some(meta.clone()),
                        _ => None,
                    });
                }
            }
            Line::Begin(lines) => {
                if lines_after >= lines && candidate.is_some() {
                    return (candidate, None);
                }
                candidate = None;
                lines_after = 0;
            }
        }
    }
    (None, candidate)
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

/// The length of [`enc`]`(id)`, without building it.
pub fn enc_len(id: &str) -> usize {
    id.bytes().map(|b| if keep(b) { 1 } else { 3 }).sum()
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

    use crate::conformance::{message_entry, sample_meta};

    fn meta(at: i64) -> Record {
        Record::Meta { meta: sample_meta("s", at) }
    }

    fn entry(id: &str) -> Record {
        Record::Entry { entry: message_entry(id, None, 1, "x") }
    }

    fn leaf(id: &str) -> Record {
        Record::Leaf { entry_id: Some(id.into()) }
    }

    #[test]
    fn several_records_are_a_begin_marker_and_their_plain_lines() {
        let records = [entry("e1"), leaf("e1"), meta(2)];
        let bytes = encode_records(&records);
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        assert_eq!(lines[0], br#"{"type":"begin","lines":3}"#);
        for (line, record) in lines[1..4].iter().zip(&records) {
            assert_eq!([*line, b"\n"].concat(), encode_record(record), "a plain v1.0.32 line");
        }
        assert_eq!(lines[4], b"");
        assert!(!contains(&bytes, b"group"));
        assert_eq!(encode_records(&records[..1]), encode_record(&records[0]));
        assert_eq!(encode_records(&[]), b"");
    }

    /// D8 at the codec level: a group cut at any byte replays whole or not at all, the tail repair
    /// cuts it back to where it began, `last_meta` agrees, and an append after the repair lands
    /// after the surviving prefix only.
    #[test]
    fn a_group_cut_at_any_byte_replays_whole_or_not_at_all() {
        let prefix = encode_record(&meta(1));
        let full = [prefix.clone(), encode_records(&[entry("e1"), leaf("e1"), meta(2)])].concat();
        let before = replay(&prefix).0;
        let after = replay(&full).0;
        let next = encode_record(&meta(3));
        for cut in prefix.len()..=full.len() {
            let bytes = &full[..cut];
            let (state, _, repair) = replay_with_repair(bytes);
            let whole = cut + 1 >= full.len();
            assert_eq!(state, if whole { after.clone() } else { before.clone() }, "cut {cut}");
            assert_eq!(last_meta(bytes), state.meta, "cut {cut}");
            assert_eq!(repair, tail_repair(bytes), "cut {cut}");
            let mut repaired = bytes.to_vec();
            match repair {
                TailRepair::None => {}
                TailRepair::Newline => repaired.push(b'\n'),
                TailRepair::Truncate(at) => repaired.truncate(at),
            }
            let expected_len = if whole { full.len() } else { prefix.len() };
            assert_eq!(repaired.len(), expected_len, "cut {cut}: repaired to the last change set");
            repaired.extend_from_slice(&next);
            let mut want = state.clone();
            want.apply(&meta(3));
            let (again, stats) = replay(&repaired);
            assert_eq!((again, stats.skipped), (want, 0), "cut {cut}: append after the repair");
        }
    }

    #[test]
    fn a_group_incomplete_at_the_next_marker_is_dropped_whole() {
        let bytes = [
            br#"{"type":"begin","lines":3}"#.as_slice(),
            b"\n",
            &encode_record(&entry("dropped")),
            &encode_records(&[entry("kept"), meta(5)]),
        ]
        .concat();
        let (state, stats, repair) = replay_with_repair(&bytes);
        assert_eq!(state.entries.keys().collect::<Vec<_>>(), ["kept"]);
        assert_eq!((stats.lines, stats.skipped, repair), (5, 2, TailRepair::None));
        assert_eq!(last_meta(&bytes), state.meta);
    }

    /// After a crash and a build that ignores markers (v1.0.32) appended one line, then another
    /// torn group: cutting only the last group would leave the first one open, and it would
    /// swallow the next append.
    #[test]
    fn the_repair_also_cuts_dropped_groups_right_before_the_open_one() {
        let prefix = encode_record(&meta(1));
        let bytes = [
            prefix.clone(),
            br#"{"type":"begin","lines":3}"#.to_vec(),
            b"\n".to_vec(),
            encode_record(&entry("e1")),
            br#"{"type":"begin","lines":2}"#.to_vec(),
            b"\n".to_vec(),
        ]
        .concat();
        let (state, _, repair) = replay_with_repair(&bytes);
        assert_eq!(repair, TailRepair::Truncate(prefix.len()));
        assert_eq!(state, replay(&prefix).0);
    }

    #[test]
    fn a_malformed_member_is_skipped_and_the_rest_of_its_group_applies() {
        let bytes = [
            br#"{"type":"begin","lines":3}"#.as_slice(),
            b"\n",
            &encode_record(&entry("e1")),
            b"{not json}\n",
            &encode_record(&meta(2)),
        ]
        .concat();
        let (state, stats, repair) = replay_with_repair(&bytes);
        assert_eq!((state.entries.len(), state.meta.is_some()), (1, true));
        assert_eq!((stats.lines, stats.skipped, repair), (4, 1, TailRepair::None));
    }

    /// Files of earlier builds: one `group` line per change set still replays as one change set.
    #[test]
    fn old_group_lines_still_replay() {
        let line = format!(
            "{{\"type\":\"group\",\"records\":[{},{},{}]}}\n",
            serde_json::to_string(&entry("e1")).unwrap(),
            serde_json::to_string(&leaf("e1")).unwrap(),
            serde_json::to_string(&meta(2)).unwrap()
        );
        let (state, stats) = replay(line.as_bytes());
        assert_eq!(stats, ReplayStats { lines: 1, skipped: 0 });
        assert_eq!(state, replay(&encode_records(&[entry("e1"), leaf("e1"), meta(2)])).0);
        assert!(state.committed.contains("e1"), "leaf then meta: the legacy rule");
        assert_eq!(last_meta(line.as_bytes()), state.meta);
    }

    #[test]
    fn last_meta_in_tail_answers_only_what_the_tail_decides() {
        let group = encode_records(&[entry("e1"), meta(2)]);
        let single = encode_record(&meta(3));
        // Last meta after a complete group: decided by the tail.
        let tail = [group.clone(), single.clone()].concat();
        assert_eq!(last_meta_in_tail(&tail), replay(&tail).0.meta);
        // Without any marker the tail cannot tell whether it lies inside an earlier group.
        assert_eq!(last_meta_in_tail(&single), None);
        assert_eq!(last_meta(&single), replay(&single).0.meta);
        // An incomplete trailing group's meta is not the answer; the one before it is.
        let torn =
            [group.clone(), br#"{"type":"begin","lines":2}"#.to_vec(), b"\n".to_vec()].concat();
        let torn = [torn, single].concat();
        assert_eq!(last_meta_in_tail(&torn), Some(sample_meta("s", 2)));
        assert_eq!(last_meta(&torn), replay(&torn).0.meta);
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

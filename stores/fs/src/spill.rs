//! Large sessions keep their entries' bodies on disk (issue 12: memory that does not grow with
//! a session's bytes). Once a session's log reaches [`super::FsConfig::spill_above`], every entry
//! line it replays or writes leaves a *stub* in the cached state — the entry with its content
//! (message blocks, custom data) emptied, so its id, parent, role, timestamp and revision still
//! drive the state machine and the path index — and the byte span of that line here. A read
//! gets the body back with one positioned read and one parse of that line.
//!
//! The rule that keeps this safe: the cached state never serves a stub's content. Every read
//! that returns entries goes through [`Spilled::body`]; a write that needs an entry's content
//! (completing an uncommitted append, an `append-delta`) [`Spilled::hydrate`]s it first; a
//! snapshot (rewrite, compaction) reads every stub's body (compaction streams them,
//! [`SnapshotPlan`]). An entry whose
//! body changed after its line (a delta) is held whole until the next rewrite or reload.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::OnceLock;

use session_core::jsonl::{self, Line};
use session_core::record::{Record, SessionState};
use session_core::wire::SessionEntry;
use session_core::StoreError;

use super::io::io_err;

/// Memory a stub is charged against the cache budget: the entry without its content, its map
/// node, its span and its place in the path index.
pub(crate) const STUB_COST: usize = 700;

/// Byte offset and length (without `\n`) of a log line.
pub(crate) type Span = (u64, usize);

/// The stubs of one cached session and where their bodies are.
#[derive(Debug, Default)]
pub(crate) struct Spilled {
    spans: HashMap<String, Span>,
    /// A read handle of the log, opened on first use, dropped when the file is replaced.
    reader: OnceLock<File>,
}

/// Entry `id` from the log line at `span` of `file` (the log at `path`).
pub(crate) fn read_entry(
    file: &File,
    path: &Path,
    id: &str,
    (offset, len): Span,
) -> Result<SessionEntry, StoreError> {
    use std::os::unix::fs::FileExt;
    let mut line = vec![0; len];
    file.read_exact_at(&mut line, offset).map_err(|e| io_err("read", path, &e))?;
    let lost = |what: &str| {
        StoreError::Corrupt(format!(
            "{}: the line at byte {offset} {what} entry {id}",
            path.display()
        ))
    };
    let Line::Records(records) = jsonl::parse_line(&line) else {
        return Err(lost("no longer holds"));
    };
    records
        .into_iter()
        .find_map(|record| match record {
            Record::Entry { entry } | Record::Append { entry, .. } if entry.id() == id => {
                Some(entry)
            }
            _ => None,
        })
        .ok_or_else(|| lost("does not hold"))
}

/// Empties what a stub does not keep: a message's content, a custom entry's data.
fn stub(entry: &mut SessionEntry) {
    match entry {
        SessionEntry::Message { message, .. } => message.content_mut().clear(),
        SessionEntry::Custom { data, .. } => *data = serde_json::Value::Null,
    }
}

impl Spilled {
    /// Whether any entry of the session is a stub.
    pub(crate) fn any(&self) -> bool {
        !self.spans.is_empty()
    }

    /// Where stub `id`'s body is, if it is a stub.
    pub(crate) fn span(&self, id: &str) -> Option<Span> {
        self.spans.get(id).copied()
    }

    pub(crate) fn stubs(&self) -> usize {
        self.spans.len()
    }

    /// The file was replaced (rewrite, compaction): no span is valid any more.
    pub(crate) fn clear(&mut self) {
        self.spans.clear();
        self.reader = OnceLock::new();
    }

    /// The body of stub `id` from its line.
    fn read(&self, path: &Path, id: &str, span: Span) -> Result<SessionEntry, StoreError> {
        let file = match self.reader.get() {
            Some(file) => file,
            None => {
                let file = File::open(path).map_err(|e| io_err("open", path, &e))?;
                self.reader.get_or_init(|| file)
            }
        };
        read_entry(file, path, id, span)
    }

    /// Entry `id` whole, from the state or from its line.
    pub(crate) fn body(
        &self,
        path: &Path,
        state: &SessionState,
        id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        match self.spans.get(id) {
            Some(&span) => self.read(path, id, span).map(Some),
            None => Ok(state.entries.get(id).cloned()),
        }
    }

    /// Replaces the stubs among `entries` (copies read from the state) by their bodies.
    pub(crate) fn fill(&self, path: &Path, entries: &mut [SessionEntry]) -> Result<(), StoreError> {
        for entry in entries {
            if let Some(&span) = self.spans.get(entry.id()) {
                *entry = self.read(path, entry.id(), span)?;
            }
        }
        Ok(())
    }

    /// Puts stub `id`'s body back into the state (a write is about to use its content).
    pub(crate) fn hydrate(
        &mut self,
        path: &Path,
        state: &mut SessionState,
        id: &str,
    ) -> Result<(), StoreError> {
        if let Some(&span) = self.spans.get(id) {
            let body = self.read(path, id, span)?;
            if let Some(entry) = state.entries.get_mut(id) {
                *entry = body;
            }
            self.spans.remove(id);
        }
        Ok(())
    }

    /// A change set just replaced (or removed) what the state holds for these entries: their
    /// old lines no longer hold their bodies. Call after planning, before writing.
    pub(crate) fn forget_replaced(&mut self, writes: &[session_core::Write]) {
        use session_core::Write;
        for write in writes {
            match write {
                Write::PutEntry(entry) => {
                    self.spans.remove(entry.id());
                }
                Write::DeleteEntries => self.spans.clear(),
                _ => {}
            }
        }
    }

    /// Puts every stub's body back (before a rewrite moves every line) and forgets the file.
    pub(crate) fn hydrate_all(
        &mut self,
        path: &Path,
        state: &mut SessionState,
    ) -> Result<(), StoreError> {
        let ids: Vec<String> = self.spans.keys().cloned().collect();
        for id in ids {
            self.hydrate(path, state, &id)?;
        }
        self.clear();
        Ok(())
    }

    /// Records where the records of one change set landed (`spans[i]` is the line of
    /// `records[i]`): with `spill`, each entry they wrote becomes a stub of its line; an entry a
    /// delta changed stays whole (its line no longer holds its body).
    pub(crate) fn note(
        &mut self,
        state: &mut SessionState,
        records: &[Record],
        spans: &[Span],
        spill: bool,
    ) {
        for (record, &span) in records.iter().zip(spans) {
            match record {
                Record::Entry { entry } | Record::Append { entry, .. } => {
                    let id = entry.id();
                    match state.entries.get_mut(id).filter(|_| spill) {
                        Some(held) => {
                            stub(held);
                            self.spans.insert(id.to_string(), span);
                        }
                        None => {
                            self.spans.remove(id);
                        }
                    }
                }
                Record::Delta { delta, .. } => {
                    self.spans.remove(&delta.entry_id);
                }
                _ => {}
            }
        }
    }
}

/// A session's snapshot ([`jsonl::encode_snapshot`]'s lines) with its stubs left as the spans of
/// their lines: taken under the session lock, written by compaction without it, so a large
/// session's bodies stream from the old file to the new one instead of all being held at once.
#[derive(Debug)]
pub(crate) struct SnapshotPlan {
    pieces: Vec<Piece>,
}

#[derive(Debug)]
enum Piece {
    Lines(Vec<u8>),
    Stub(String, Span),
}

/// Bytes compaction writes at once.
const CHUNK: usize = 1 << 20;

/// The stub a snapshot record stands for, with its line's span.
fn stub_of<'r>(record: &'r Record, spilled: &Spilled) -> Option<(&'r str, Span)> {
    match record {
        Record::Entry { entry } => spilled.span(entry.id()).map(|span| (entry.id(), span)),
        _ => None,
    }
}

impl SnapshotPlan {
    /// At least the snapshot's length, without keeping it: a stub counts its line, which is its
    /// `entry` line or longer (an `append` line also carries the leaf and the meta). The
    /// compaction check runs this under the session lock, and most checks find the file under
    /// twice it: the encoded snapshot is built ([`Self::take`]) only for a compaction.
    pub(crate) fn estimate(state: &SessionState, spilled: &Spilled) -> u64 {
        let mut estimate = 0;
        state.each_snapshot_record(|record| {
            estimate += match stub_of(&record, spilled) {
                Some((_, span)) => span.1 as u64 + 1,
                None => jsonl::encode_record(&record).len() as u64,
            };
        });
        estimate
    }

    pub(crate) fn take(state: &SessionState, spilled: &Spilled) -> SnapshotPlan {
        let mut pieces = Vec::new();
        state.each_snapshot_record(|record| match (stub_of(&record, spilled), pieces.last_mut()) {
            (Some((id, span)), _) => pieces.push(Piece::Stub(id.to_string(), span)),
            (None, Some(Piece::Lines(lines))) if lines.len() < CHUNK => {
                lines.extend_from_slice(&jsonl::encode_record(&record));
            }
            (None, _) => pieces.push(Piece::Lines(jsonl::encode_record(&record))),
        });
        SnapshotPlan { pieces }
    }

    /// Writes the snapshot through `write` in chunks of about [`CHUNK`], each stub's body read
    /// from `log` (the file its span is in, at `log_path`). Returns the snapshot's length and
    /// each stub's span in it.
    pub(crate) fn write(
        &self,
        log: &File,
        log_path: &Path,
        mut write: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<(u64, HashMap<String, Span>), StoreError> {
        let (mut out, mut written) = (Vec::with_capacity(CHUNK), 0u64);
        let mut moved = HashMap::new();
        for piece in &self.pieces {
            match piece {
                Piece::Lines(lines) => out.extend_from_slice(lines),
                Piece::Stub(id, span) => {
                    let entry = read_entry(log, log_path, id, *span)?;
                    let line = jsonl::encode_record(&Record::Entry { entry });
                    let at = written + out.len() as u64;
                    moved.insert(id.clone(), (at, line.len() - 1));
                    out.extend_from_slice(&line);
                }
            }
            if out.len() >= CHUNK {
                write(&out)?;
                written += out.len() as u64;
                out.clear();
            }
        }
        write(&out)?;
        Ok((written + out.len() as u64, moved))
    }
}

impl Spilled {
    /// A compaction replaced the log: the snapshot's stubs are at `moved`, and the lines that
    /// were at `from` or later in the old file follow the snapshot (`snapshot_len`). False when
    /// a stub is in neither (the caller replays the new file).
    pub(crate) fn moved(
        &mut self,
        moved: &HashMap<String, Span>,
        from: u64,
        snapshot_len: u64,
    ) -> bool {
        self.reader = OnceLock::new();
        for (id, span) in self.spans.iter_mut() {
            if span.0 >= from {
                span.0 = span.0 - from + snapshot_len;
            } else if let Some(&new) = moved.get(id) {
                *span = new;
            } else {
                return false;
            }
        }
        true
    }
}

/// The spans of the lines of `encoded` (what [`jsonl::encode_records`] wrote at `base` for
/// `count` records: their one plain line, or a `begin` marker and one line each).
pub(crate) fn written_spans(base: u64, encoded: &[u8], count: usize) -> Vec<Span> {
    let mut spans = Vec::with_capacity(count + 1);
    let mut at = 0usize;
    for end in memchr::memchr_iter(b'\n', encoded) {
        spans.push((base + at as u64, end - at));
        at = end + 1;
    }
    if at < encoded.len() {
        spans.push((base + at as u64, encoded.len() - at)); // a last line without its newline
    }
    if count > 1 {
        spans.remove(0); // the marker
    }
    spans.truncate(count);
    spans
}

#[cfg(test)]
mod tests {
    use super::written_spans;

    /// The spans are the lines' starts and lengths (after `base`), the `begin` marker left out
    /// when there are several records, a last line without its newline included.
    #[test]
    fn written_spans_are_the_lines_of_the_records() {
        assert_eq!(written_spans(10, b"{\"a\":1}\n", 1), [(10, 7)]);
        let group = b"{\"begin\":2}\n{\"a\":1}\n{\"bb\":2}\n";
        assert_eq!(written_spans(0, group, 2), [(12, 7), (20, 8)]);
        assert_eq!(
            written_spans(5, b"{}\ncd", 2),
            [(8, 2)],
            "a marker, then a line without newline"
        );
        assert_eq!(written_spans(0, b"", 0), []);
    }
}

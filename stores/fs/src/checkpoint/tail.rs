//! The log lines written after a checkpoint, applied onto its cold view at open: a `kill -9`
//! within the second before the next checkpoint costs the first read that tail, not a replay.
//!
//! The tail is walked with the replay rules of `session_core::jsonl` (groups, torn lines) and
//! each record does to the view what `SessionState::apply` does to the state, for what the view
//! answers (meta, leaf, entries, the active path). The view follows what a live session writes:
//! appends and entries added under the active leaf, leaf moves onto them, deltas, meta updates;
//! feed and commit records change nothing it serves. A lifecycle record (trash, restore,
//! expiry) is not followed either: a view holds no lifecycle. Anything else (an entry replaced, the leaf
//! moved elsewhere) or a torn tail makes the open fail: the session replays its log as without a
//! checkpoint (at most the tail's reading was spent in vain). The tail is read line by line,
//! never held whole.

use std::io::{self, Read, Seek};

use session_core::jsonl::{TailRepair, Walker};
use session_core::path_index::EntryClass;
use session_core::record::{self, Record};
use session_core::wire::SessionEntry;

use super::{to_u32, Added, ColdView, OFF_PATH};
use crate::session::walk_lines;
use crate::spill::{Span, STUB_COST};

impl ColdView {
    /// Applies the log's bytes from the checkpoint's length up to `len`; `None` when the view
    /// cannot follow them (see the module doc).
    pub(super) fn follow_tail(&mut self, len: u64) -> Option<()> {
        let from = self.image.log.len;
        if len == from {
            return Some(());
        }
        let mut file = self.log.try_clone().ok()?;
        file.seek(io::SeekFrom::Start(from)).ok()?;
        let reader = io::BufReader::with_capacity(1 << 16, file.take(len - from));
        let mut walker = Walker::at(usize::try_from(from).ok()?);
        let mut followed = true;
        let read = walk_lines(reader, &mut walker, &mut |set| {
            followed = followed
                && set.spans.len() == set.records.len()
                && set
                    .records
                    .iter()
                    .zip(set.spans)
                    .all(|(record, &(at, n))| self.follow(record, (at as u64, n)).is_some());
        });
        let (_, repair) = walker.finish();
        if !followed || read.ok()? != len - from || repair != TailRepair::None {
            return None;
        }
        self.tail_cost = self.added.iter().map(|a| a.id.len() * 2 + 120).sum::<usize>()
            + self.changed.len() * STUB_COST
            + self.changed.values().map(content_bytes).sum::<usize>();
        Some(())
    }

    /// One record of the tail, read from the line at `span`.
    fn follow(&mut self, record: &Record, span: Span) -> Option<()> {
        match record {
            Record::Meta { meta } => self.meta = meta.clone(),
            Record::Entry { entry } => {
                self.add(entry, span)?;
            }
            Record::Append { entry, meta } => {
                let number = self.add(entry, span)?;
                self.extend_path(number)?;
                self.meta = meta.clone();
            }
            Record::Leaf { entry_id } => {
                if entry_id.as_deref() != self.image.leaf.as_deref() {
                    self.extend_path(self.number(entry_id.as_deref()?)?)?;
                }
            }
            Record::Delta { delta, at } => {
                // As in replay: a delta that does not fit its entry changes nothing.
                let Some(number) = self.number(&delta.entry_id) else { return Some(()) };
                let mut entry = match self.changed.remove(&number) {
                    Some(entry) => entry,
                    None => self.body(number).ok()?,
                };
                if record::delta_entry(Some(&mut entry), delta).is_ok() {
                    self.meta.updated_at = *at;
                }
                self.changed.insert(number, entry);
            }
            Record::Commit { .. } | Record::Settle | Record::Change { .. } => {}
            // A view never holds a lifecycle: the session replays.
            Record::Trash { .. } | Record::Restore | Record::Expiry { .. } => return None,
        }
        Some(())
    }

    /// Adds a new entry, off the path; `None` when its id is taken (a replaced entry may move
    /// the path).
    fn add(&mut self, entry: &SessionEntry, span: Span) -> Option<usize> {
        if self.number(entry.id()).is_some() {
            return None;
        }
        let number = self.image.spans.len() + self.added.len();
        self.added.push(Added {
            id: entry.id().to_string(),
            parent: entry.parent_id().map(String::from),
            class: EntryClass::of(entry),
            span,
            position: OFF_PATH,
        });
        self.added_numbers.insert(entry.id().to_string(), number);
        Some(number)
    }

    /// Makes entry `number` the leaf; only an entry added after the checkpoint whose parents,
    /// all added after it and off the path, lead to the current leaf: the path grows by that
    /// chain (`None` otherwise).
    fn extend_path(&mut self, number: usize) -> Option<()> {
        let first = self.image.spans.len();
        let mut chain = Vec::new();
        let mut at = number;
        loop {
            let added = self.added.get(at.checked_sub(first)?)?;
            // More links than added entries: their parents make a cycle.
            if added.position != OFF_PATH || chain.len() == self.added.len() {
                return None;
            }
            chain.push(at);
            if added.parent == self.image.leaf {
                break;
            }
            at = *self.added_numbers.get(added.parent.as_deref()?)?;
        }
        for at in chain.into_iter().rev() {
            let position = to_u32(self.image.path.len()).ok()?;
            let added = &mut self.added[at - first];
            added.position = position;
            self.image.path.push(to_u32(at).ok()?);
            self.image.classes.push(added.class as u8);
        }
        self.image.leaf = Some(self.added[number - first].id.clone());
        Some(())
    }
}

/// The bytes of an entry's content (what a changed entry holds beyond a stub).
fn content_bytes(entry: &SessionEntry) -> usize {
    serde_json::to_vec(entry).map_or(0, |json| json.len())
}

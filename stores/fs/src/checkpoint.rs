//! Cold opens of large sessions (issue 12): a checkpoint per spilling session, so the first
//! reads after a restart cost a page, not a replay of the whole log.
//!
//! `<enc(id)>.jsonl.ckpt` describes the log at one length: the session's meta and active leaf,
//! every entry's id (sorted) with the byte span of the log line holding its body (or its body
//! inline, when no line holds it: a delta changed it), and the active path as entry numbers with
//! their classes. It is never the source of truth: it is only used when the log is the one it was
//! taken from (same inode, at least as long, the same 4 KB before that length) and its own
//! checksum holds; otherwise it is ignored (the session replays its log) and taken again. The
//! lines written after it (a `kill -9` within the second before the next checkpoint) are applied
//! onto it at open ([`tail`]), so the first read costs the page and that tail, not the log.
//! While a session is not replayed, reads of its meta, leaf, entries and active path are answered
//! from its [`ColdView`]; anything else (a write, the feed, another branch) replays the log first.
//! A background job takes the checkpoint about a second after a large session's last write, and a
//! store being closed takes the ones that are behind.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use session_core::jsonl::TailRepair;
use session_core::path::{PathSelect, PathSpot};
use session_core::path_index::EntryClass;
use session_core::record::SessionState;
use session_core::wire::{SessionEntry, SessionMeta};
use session_core::StoreError;

use super::io::io_err;
use super::spill::{self, Span, Spilled};

mod tail;

const VERSION: u32 = 1;
/// Bytes at the end of the log whose checksum a checkpoint keeps.
const TAIL: u64 = 4096;
/// Set in a span's length: the body is in [`Image::inline`], not in the log.
const INLINE: u32 = 1 << 31;
/// No path position ([`Image::position`]).
const OFF_PATH: u32 = u32::MAX;

/// Which log a checkpoint describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct LogStamp {
    ino: u64,
    len: u64,
    tail_crc: u32,
}

impl LogStamp {
    /// The stamp of `file` at its length.
    fn of(file: &File) -> io::Result<LogStamp> {
        let meta = file.metadata()?;
        LogStamp::at(file, meta.ino(), meta.len())
    }

    /// The stamp `file` (inode `ino`) had when it was `len` bytes long, if it only grew since.
    fn at(file: &File, ino: u64, len: u64) -> io::Result<LogStamp> {
        let from = len.saturating_sub(TAIL);
        let mut tail = vec![0; (len - from) as usize];
        file.read_exact_at(&mut tail, from)?;
        Ok(LogStamp { ino, len, tail_crc: crc32fast::hash(&tail) })
    }
}

/// What a checkpoint file holds (postcard, then the CRC-32 of those bytes).
#[derive(Debug, Serialize, Deserialize)]
struct Image {
    version: u32,
    log: LogStamp,
    /// The session's meta as JSON.
    meta: String,
    leaf: Option<String>,
    /// Every entry id, sorted, concatenated; entry `i` ends at `id_ends[i]`.
    ids: String,
    id_ends: Vec<u32>,
    /// Per entry: its log line (offset, length), or with [`INLINE`] its JSON in `inline`.
    spans: Vec<(u64, u32)>,
    /// Per entry: its position on the active path, or [`OFF_PATH`].
    position: Vec<u32>,
    /// The active path root → leaf: entry numbers and [`EntryClass`] discriminants.
    path: Vec<u32>,
    classes: Vec<u8>,
    inline: String,
}

/// A session answered from its checkpoint while its log is not replayed.
#[derive(Debug)]
pub(crate) struct ColdView {
    image: Image,
    meta: SessionMeta,
    log: File,
    log_path: PathBuf,
    /// Entries the log added after the checkpoint ([`tail`]), numbered on from the image's.
    added: Vec<Added>,
    added_numbers: HashMap<String, usize>,
    /// Entries whose body a delta after the checkpoint changed, whole.
    changed: HashMap<usize, SessionEntry>,
    /// What `added` and `changed` are charged against the cache budget.
    tail_cost: usize,
}

/// An entry the log added after its checkpoint.
#[derive(Debug)]
struct Added {
    id: String,
    parent: Option<String>,
    class: EntryClass,
    span: Span,
    /// Its position on the active path, or [`OFF_PATH`].
    position: u32,
}

fn checkpoint_path(log_path: &Path) -> PathBuf {
    let mut path = log_path.as_os_str().to_owned();
    path.push(".ckpt");
    PathBuf::from(path)
}

/// Removes a session's checkpoint (its log was rewritten or removed).
pub(crate) fn remove(log_path: &Path) {
    let _ = fs::remove_file(checkpoint_path(log_path));
}

/// The checkpoint of a replayed session, taken under its lock ([`Checkpoint::write`] later,
/// without it).
#[derive(Debug)]
pub(crate) struct Checkpoint {
    image: Image,
    log_path: PathBuf,
}

/// What a checkpoint is taken from: a loaded session (`session.rs`'s `Loaded::source`), its
/// state and where its log stood when the state was replayed.
pub(crate) struct Source<'a> {
    pub(crate) state: &'a SessionState,
    pub(crate) on_disk: bool,
    pub(crate) repair: &'a TailRepair,
    pub(crate) len: u64,
    pub(crate) spilled: &'a Spilled,
}

impl Checkpoint {
    /// `None` when the session has nothing a cold view could serve: no meta, a broken active
    /// path, no log, or a log that is not the one the state was replayed from.
    pub(crate) fn take(
        loaded: Source<'_>,
        log_path: &Path,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let state = &loaded.state;
        // A trashed or expiring session is always replayed: its cold view would not know it.
        let Some(meta) = state.meta.as_ref().filter(|_| state.lifecycle.is_empty()) else {
            return Ok(None);
        };
        // A repair due means the log ends inside what replay dropped: not a place to go on from.
        if state.path_index().broken().is_some()
            || !loaded.on_disk
            || *loaded.repair != TailRepair::None
        {
            return Ok(None);
        }
        let file = File::open(log_path).map_err(|e| io_err("open", log_path, &e))?;
        let log = LogStamp::of(&file).map_err(|e| io_err("read", log_path, &e))?;
        if log.len != loaded.len {
            return Ok(None);
        }
        let n = state.entries.len();
        let mut image = Image {
            version: VERSION,
            log,
            meta: serde_json::to_string(meta).map_err(|e| StoreError::Internal(e.to_string()))?,
            leaf: state.leaf.clone(),
            ids: String::new(),
            id_ends: Vec::with_capacity(n),
            spans: Vec::with_capacity(n),
            position: vec![OFF_PATH; n],
            path: Vec::new(),
            classes: Vec::new(),
            inline: String::new(),
        };
        for (id, entry) in &state.entries {
            image.ids.push_str(id);
            image.id_ends.push(to_u32(image.ids.len())?);
            let span = match loaded.spilled.span(id) {
                Some((offset, len)) => (offset, to_u32(len)?),
                None => {
                    let at = image.inline.len() as u64;
                    let json = serde_json::to_string(entry)
                        .map_err(|e| StoreError::Internal(e.to_string()))?;
                    image.inline.push_str(&json);
                    (at, to_u32(json.len())? | INLINE)
                }
            };
            image.spans.push(span);
        }
        let index = state.path_index();
        for at in 0..index.len() {
            let Some(id) = index.id_at(at) else { return Ok(None) };
            let Some(number) = image.number(id) else { return Ok(None) };
            image.position[number] = to_u32(at)?;
            image.path.push(to_u32(number)?);
            image.classes.push(EntryClass::of(&state.entries[id]) as u8);
        }
        Ok(Some(Checkpoint { image, log_path: log_path.to_path_buf() }))
    }

    /// The log length this checkpoint describes.
    pub(crate) fn log_len(&self) -> u64 {
        self.image.log.len
    }

    /// Writes the checkpoint (tmp + rename; no flush: a torn or lost checkpoint only costs a
    /// replay, its checksum tells).
    pub(crate) fn write(&self) -> Result<(), StoreError> {
        let path = checkpoint_path(&self.log_path);
        let mut bytes =
            postcard::to_stdvec(&self.image).map_err(|e| StoreError::Internal(e.to_string()))?;
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        fs::write(&tmp, &bytes).map_err(|e| io_err("write", Path::new(&tmp), &e))?;
        fs::rename(&tmp, &path).map_err(|e| io_err("rename", &path, &e))
    }
}

fn to_u32(n: usize) -> Result<u32, StoreError> {
    u32::try_from(n)
        .ok()
        .filter(|n| n & INLINE == 0)
        .ok_or_else(|| StoreError::Internal("session too large for a checkpoint".into()))
}

impl Image {
    fn id(&self, number: usize) -> &str {
        let start = number.checked_sub(1).map_or(0, |i| self.id_ends[i] as usize);
        &self.ids[start..self.id_ends[number] as usize]
    }

    /// The number of entry `id`.
    fn number(&self, id: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.id_ends.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.id(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Every offset and number in bounds, ids sorted: what decoding alone does not check.
    fn consistent(&self) -> bool {
        let n = self.id_ends.len();
        let ends_ok = self.id_ends.windows(2).all(|w| w[0] <= w[1])
            && self.id_ends.last().is_none_or(|&end| end as usize == self.ids.len())
            && self.id_ends.iter().all(|&end| self.ids.is_char_boundary(end as usize));
        ends_ok
            && (1..n).all(|i| self.id(i - 1) < self.id(i))
            && self.spans.len() == n
            && self.position.len() == n
            && self.path.len() == self.classes.len()
            && self.path.iter().all(|&p| (p as usize) < n)
            && self.classes.iter().all(|&c| EntryClass::from_index(c).is_some())
            && self.spans.iter().all(|&(at, len)| {
                len & INLINE == 0 || {
                    let end = at.saturating_add(u64::from(len & !INLINE));
                    end <= self.inline.len() as u64
                        && self.inline.is_char_boundary(at as usize)
                        && self.inline.is_char_boundary(end as usize)
                }
            })
    }
}

impl ColdView {
    /// The session's checkpoint, if it still describes its log; `None` when it is missing,
    /// stale or damaged (the caller replays the log, and a new checkpoint is taken).
    pub(crate) fn open(log_path: &Path) -> Option<ColdView> {
        let path = checkpoint_path(log_path);
        let bytes = fs::read(&path).ok()?;
        let (body, crc) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
        if crc32fast::hash(body).to_le_bytes() != crc {
            return None;
        }
        let image: Image = postcard::from_bytes(body).ok()?;
        if image.version != VERSION || !image.consistent() {
            return None;
        }
        let log = File::open(log_path).ok()?;
        let stat = log.metadata().ok()?;
        if stat.len() < image.log.len
            || LogStamp::at(&log, stat.ino(), image.log.len).ok()? != image.log
        {
            return None;
        }
        let meta = serde_json::from_str(&image.meta).ok()?;
        let mut view = ColdView {
            image,
            meta,
            log,
            log_path: log_path.to_path_buf(),
            added: Vec::new(),
            added_numbers: HashMap::new(),
            changed: HashMap::new(),
            tail_cost: 0,
        };
        view.follow_tail(stat.len())?;
        Some(view)
    }

    /// Bytes charged against the cache budget.
    pub(crate) fn cost(&self) -> usize {
        let image = &self.image;
        image.ids.len()
            + image.inline.len()
            + image.id_ends.len() * 20
            + image.path.len() * 5
            + self.tail_cost
            + 512
    }

    /// The log length it describes.
    pub(crate) fn log_len(&self) -> u64 {
        self.image.log.len
    }

    pub(crate) fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    pub(crate) fn leaf(&self) -> Option<&str> {
        self.image.leaf.as_deref()
    }

    /// The number of entry `id`, in the image or added after it.
    fn number(&self, id: &str) -> Option<usize> {
        self.image.number(id).or_else(|| self.added_numbers.get(id).copied())
    }

    /// Entry `number`'s position on the active path, or [`OFF_PATH`].
    fn position(&self, number: usize) -> u32 {
        match number.checked_sub(self.image.spans.len()) {
            Some(added) => self.added[added].position,
            None => self.image.position[number],
        }
    }

    fn body(&self, number: usize) -> Result<SessionEntry, StoreError> {
        if let Some(entry) = self.changed.get(&number) {
            return Ok(entry.clone());
        }
        if let Some(added) = number.checked_sub(self.image.spans.len()) {
            let added = &self.added[added];
            return spill::read_entry(&self.log, &self.log_path, &added.id, added.span);
        }
        let image = &self.image;
        let (at, len) = image.spans[number];
        if len & INLINE != 0 {
            let json = &image.inline[at as usize..at as usize + (len & !INLINE) as usize];
            return serde_json::from_str(json).map_err(|e| {
                StoreError::Corrupt(format!("checkpoint of {}: {e}", self.log_path.display()))
            });
        }
        let span: Span = (at, len as usize);
        spill::read_entry(&self.log, &self.log_path, image.id(number), span)
    }

    /// Entry `id`, whole.
    pub(crate) fn entry(&self, id: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.number(id).map(|n| self.body(n)).transpose()
    }

    /// [`session_core::Store::path_locate`] on the active path; `None` for another leaf.
    pub(crate) fn locate(&self, leaf: &str, entry_id: Option<&str>) -> Option<PathSpot> {
        let image = &self.image;
        if image.leaf.as_deref() != Some(leaf) {
            return None;
        }
        let at = entry_id.and_then(|id| {
            let at = self.position(self.number(id)?);
            (at != OFF_PATH).then(|| (at as usize, self.class_at(at as usize)))
        });
        Some(PathSpot { len: image.path.len(), at })
    }

    fn class_at(&self, at: usize) -> EntryClass {
        EntryClass::from_index(self.image.classes[at]).unwrap_or(EntryClass::CustomEntry)
    }

    /// [`session_core::Store::path_select`] on the active path; `None` for another leaf.
    pub(crate) fn select(
        &self,
        leaf: &str,
        query: &PathSelect,
    ) -> Option<Result<Vec<(usize, SessionEntry)>, StoreError>> {
        let image = &self.image;
        if image.leaf.as_deref() != Some(leaf) {
            return None;
        }
        let keep = |at: &usize| query.classes.contains(self.class_at(*at));
        let positions: Vec<usize> = if query.backward {
            let end = query.from.min(image.path.len());
            let mut older: Vec<usize> = (0..end).rev().filter(keep).take(query.limit).collect();
            older.reverse();
            older
        } else {
            (query.from..image.path.len()).filter(keep).take(query.limit).collect()
        };
        Some(
            positions.into_iter().map(|at| Ok((at, self.body(image.path[at] as usize)?))).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FsConfig, FsStore, SyncMode};
    use session_core::conformance::{custom_entry, message_entry, sample_meta};
    use session_core::path::PathSelect;
    use session_core::path_index::EntryClasses;
    use session_core::wire::MessageDelta;
    use session_core::{ChangeSet, Store, Write};

    fn open(dir: &std::path::Path) -> FsStore {
        let mut cfg = FsConfig::new(dir).sync(SyncMode::Never);
        cfg.spill_above = 0;
        FsStore::open(cfg).expect("open")
    }

    /// A session of 30 entries: a path of 20 (every third a custom entry) and a branch of 10.
    fn fill(store: &FsStore) {
        let mut set = ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)));
        let mut parent: Option<String> = None;
        for i in 0..20 {
            let id = format!("e{i:02}");
            let entry = match i % 3 {
                2 => custom_entry(&id, parent.as_deref(), i),
                _ => message_entry(&id, parent.as_deref(), i, &format!("text {i}")),
            };
            set = set.with(Write::PutEntry(entry));
            parent = Some(id);
        }
        for i in 0..10 {
            let id = format!("b{i:02}");
            let parent = if i == 0 { "e05".to_string() } else { format!("b{:02}", i - 1) };
            set = set.with(Write::PutEntry(message_entry(&id, Some(&parent), 100 + i, "b")));
        }
        store.apply(&set.with(Write::SetActiveLeaf("e19".into()))).expect("fill");
    }

    /// One more entry on the active path, made the leaf.
    fn extend(store: &FsStore) {
        let entry = message_entry("e20", Some("e19"), 20, "new");
        let set = ChangeSet::new("s")
            .with(Write::PutEntry(entry))
            .with(Write::SetActiveLeaf("e20".into()));
        store.apply(&set).expect("write");
    }

    /// Everything a cold view answers, as the store answers it (the path of the active leaf).
    fn reads(store: &FsStore) -> String {
        let leaf = store.get_active_leaf("s").expect("leaf").expect("a leaf");
        let mut out = format!("{:?} {leaf}", store.get_meta("s"));
        for id in ["e00", "e07", "b03", "e20", "e21", "b10", "zz"] {
            out += &format!(" {:?}", store.get_entry("s", id));
            out += &format!(" {:?}", store.path_locate("s", &leaf, Some(id)));
        }
        for (classes, from, backward, limit) in [
            (EntryClasses::ALL, 0, false, 7),
            (EntryClasses::MESSAGES, 5, false, 100),
            (EntryClasses::ALL, 20, true, 6),
            (EntryClasses::MESSAGES, 13, true, 4),
        ] {
            let query = PathSelect { classes, from, backward, limit };
            out += &format!(" {:?}", store.path_select("s", &leaf, &query));
        }
        out
    }

    /// A restart answers the session's reads from its checkpoint without replaying it, the same
    /// as before; the first write replays it.
    #[test]
    fn a_closed_store_reopens_large_sessions_from_their_checkpoints() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        fill(&store);
        let before = reads(&store);
        drop(store);
        assert!(dir.path().join("s.jsonl.ckpt").exists(), "closing takes the checkpoint");
        let store = open(dir.path());
        assert_eq!(reads(&store), before);
        assert_eq!(store.cached_sessions(), 0, "answered without a replay");
        // Another branch is not in the checkpoint: that read replays.
        let query = PathSelect { classes: EntryClasses::ALL, from: 0, backward: false, limit: 3 };
        assert_eq!(store.path_select("s", "b09", &query).expect("branch").len(), 3);
        assert_eq!(store.cached_sessions(), 1);
        assert_eq!(reads(&store), before);
        extend(&store);
        let after = reads(&store);
        drop(store);
        let store = open(dir.path());
        assert_eq!(reads(&store), after);
        assert_eq!(store.cached_sessions(), 0);
    }

    /// Writes `write` after the session's checkpoint and puts that checkpoint back, as a
    /// `kill -9` before the next one leaves it; the reads the writes left.
    fn killed_after(dir: &std::path::Path, write: impl FnOnce(&FsStore)) -> String {
        let store = open(dir);
        fill(&store);
        drop(store);
        let ckpt = dir.join("s.jsonl.ckpt");
        let old = std::fs::read(&ckpt).expect("checkpoint");
        let store = open(dir);
        write(&store);
        let expected = reads(&store);
        drop(store);
        std::fs::write(&ckpt, &old).expect("put back");
        expected
    }

    /// What a live session writes after its checkpoint (entries under the leaf and leaf moves onto
    /// them, a chain of entries and a leaf move to its end as `append-many` writes them, a
    /// committed append, a delta to it, a meta update, an entry on another branch) is applied
    /// onto the checkpoint at open: the reads are the log's, without a replay.
    #[test]
    fn lines_written_after_the_checkpoint_are_applied_onto_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let expected = killed_after(dir.path(), |store| {
            extend(store);
            let chain = ChangeSet::new("s")
                .with(Write::PutEntry(message_entry("c1", Some("e20"), 30, "chain 1")))
                .with(Write::PutEntry(custom_entry("c2", Some("c1"), 31)))
                .with(Write::PutEntry(message_entry("c3", Some("c2"), 32, "chain 3")))
                .with(Write::SetActiveLeaf("c3".into()));
            store.apply(&chain).expect("chain");
            let entry = message_entry("e21", None, 21, "streamed");
            let commit = Write::CommitAppend { entry, parent_explicit: false };
            store.apply(&ChangeSet::new("s").with(commit)).expect("commit");
            let delta = MessageDelta {
                session_id: "s".into(),
                entry_id: "e21".into(),
                revision: 1,
                block_index: 0,
                text: Some(" on".into()),
                thinking: None,
            };
            let delta = Write::AppendDelta { delta, at: 500 };
            store.apply(&ChangeSet::new("s").with(delta)).expect("delta");
            let branch = message_entry("b10", Some("b09"), 110, "b");
            store
                .apply(
                    &ChangeSet::new("s")
                        .with(Write::PutEntry(branch))
                        .with(Write::PutMeta(sample_meta("s", 600))),
                )
                .expect("branch");
        });
        assert!(expected.contains("streamed on") && expected.contains("chain 3"), "{expected}");
        let store = open(dir.path());
        assert_eq!(reads(&store), expected);
        assert_eq!(store.cached_sessions(), 0, "answered without a replay");
    }

    /// A checkpoint that does not describe the log (a tail it cannot follow, damaged) is
    /// ignored: the session replays and answers what its log holds.
    #[test]
    fn a_stale_or_damaged_checkpoint_is_never_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The leaf moved to another branch: the checkpoint holds no parents to follow it with.
        let expected = killed_after(dir.path(), |store| {
            extend(store);
            store
                .apply(&ChangeSet::new("s").with(Write::SetActiveLeaf("b09".into())))
                .expect("leaf");
        });
        let ckpt = dir.path().join("s.jsonl.ckpt");
        let store = open(dir.path());
        assert_eq!(reads(&store), expected);
        assert_eq!(store.cached_sessions(), 1, "a stale checkpoint replays");
        drop(store);
        // Damaged: one byte flipped.
        let mut bytes = std::fs::read(&ckpt).expect("checkpoint");
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x20;
        std::fs::write(&ckpt, &bytes).expect("damage");
        let store = open(dir.path());
        assert_eq!(reads(&store), expected);
        assert_eq!(store.cached_sessions(), 1, "a damaged checkpoint replays");
        // A deleted session leaves no checkpoint behind.
        store
            .apply(
                &ChangeSet::new("s")
                    .with(Write::DeleteEntries)
                    .with(Write::DeleteActiveLeaf)
                    .with(Write::DeleteMeta),
            )
            .expect("delete");
        drop(store);
        assert!(!ckpt.exists());
    }
}

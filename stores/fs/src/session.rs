//! One session's log file and its cached state: lazy load by replay, append with tail repair,
//! snapshot rewrite (tmp + rename) and compaction. Disk first, cache second: the caller plans a
//! change set into the cached state in place (no copy of a large session per write) under the
//! session lock, then these functions write it; on any failure the caller drops the cached state
//! so the next touch replays what the disk really holds. Nobody observes the state in between.

use std::fs::{self, File};
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use session_core::jsonl::{self, enc, TailRepair};
use session_core::record::{Record, SessionState};
use session_core::StoreError;

use super::checkpoint::{self, ColdView};
use super::flush::Flusher;
use super::io::{io_err, remove_file_if_exists, sync_dir, write_atomic};
use super::journal::Journal;
use super::spill::{self, Spilled, STUB_COST};
use super::sync::SyncMode;
use super::vfs::FsIo;

/// Memory a replayed session takes per byte of its log file, as charged against the cache
/// budget: the full-size bench (`benches/fs_full.rs`) measured ~3.4 (RSS over cached file bytes)
/// for 100 KB sessions of chat messages.
pub(crate) const MEMORY_PER_FILE_BYTE: usize = 3;

/// Below this size a file is never compacted.
pub(crate) const COMPACT_MIN_BYTES: u64 = 16 * 1024;

/// A session's lock, cached state (boxed: an idle slot costs a pointer, not a whole state) and
/// LRU tick. A slot leaves the store's map only when nothing else holds it and it caches nothing
/// (checked under the shard's write lock, [`super::FsStore`]'s `prune_idle_slots`), so two
/// threads never hold different locks for one session.
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// A fresh epoch for a cached state (a background compaction installs its file only while the
/// epoch it started from is current, `compact.rs`).
pub(crate) fn next_epoch() -> u64 {
    EPOCH.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Default)]
pub(crate) struct Slot {
    pub(crate) inner: Mutex<Option<Box<Loaded>>>,
    /// While `inner` holds nothing: the session's checkpoint, answering reads without a replay
    /// ([`ColdView`]). Locked only while `inner` is held.
    pub(crate) cold: Mutex<Option<Box<ColdView>>>,
    pub(crate) last_used: AtomicU64,
    /// Group commit of the session's appends (`fsync: group`, [`super::flush`]).
    pub(crate) flusher: Arc<Flusher>,
}

/// A loaded session: the replayed state and what is known about its file.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) state: SessionState,
    /// The session's log file (kept: building it per append encodes the id each time), and
    /// the file open for appending, once opened.
    pub(crate) path: Arc<Path>,
    pub(crate) file: Option<Arc<File>>,
    pub(crate) on_disk: bool,
    pub(crate) len: u64,
    pub(crate) repair: TailRepair,
    pub(crate) compact_at: u64,
    /// New per load and per rewrite: a background compaction only installs its file while the
    /// epoch it started from is still current ([`super::compact`]).
    pub(crate) epoch: u64,
    /// A compaction job for this file is queued or running.
    pub(crate) compact_queued: bool,
    /// The entries held as stubs, their bodies on disk ([`spill`]).
    pub(crate) spilled: Spilled,
    /// The log length the checkpoint on disk describes, when known ([`super::checkpoint`]).
    pub(crate) checkpoint_len: Option<u64>,
    /// A checkpoint job for this session is queued.
    pub(crate) checkpoint_queued: bool,
}

/// Where a session lives and how its writes are flushed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) data_dir: &'a Path,
    pub(crate) sync: SyncMode,
    pub(crate) compact_min: u64,
    /// Logs this large keep their entries' bodies on disk ([`spill`]).
    pub(crate) spill_above: u64,
    /// Changes a replay keeps per feed.
    pub(crate) feed_retention: session_core::feed::Retention,
    pub(crate) io: &'a dyn FsIo,
    /// The data_dir's journal (`fsync: group`): appends are durable through it.
    pub(crate) journal: Option<&'a Arc<Journal>>,
}

impl Ctx<'_> {
    pub(crate) fn log_path(&self, sid: &str) -> PathBuf {
        self.data_dir.join(format!("{}.jsonl", enc(sid)))
    }

    /// Flushes an append of `bytes` at `base` in place in mode `always`; `group` records it in
    /// the journal and leaves the flush to the flusher: the journal's sequence number.
    fn flush(
        &self,
        file: &Arc<File>,
        path: &Path,
        base: u64,
        bytes: &[u8],
    ) -> Result<Option<(&Arc<Journal>, u64)>, StoreError> {
        match (self.sync, self.journal) {
            (SyncMode::Always, _) => {
                self.io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))?;
                Ok(None)
            }
            (SyncMode::Group, Some(journal)) => {
                let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
                Ok(Some((journal, journal.append(&name, file, base, bytes)?)))
            }
            (SyncMode::Group | SyncMode::Never, _) => Ok(None),
        }
    }
}

/// Whether the session's log on disk still holds the session (not only a deleted session's feed
/// tombstone): what decides whether an interrupted delete's trashed attachments go back home.
/// An unreadable log counts as holding it (its attachments are kept).
pub(crate) fn session_on_disk(data_dir: &Path, sid: &str) -> bool {
    match fs::read(data_dir.join(format!("{}.jsonl", enc(sid)))) {
        Ok(bytes) => jsonl::replay_with_repair(&bytes).0.holds_session(),
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    }
}

/// Feeds every line `reader` holds to `walker` (a log is never held whole); the bytes read.
pub(crate) fn walk_lines(
    mut reader: impl BufRead,
    walker: &mut jsonl::Walker,
    apply: &mut dyn FnMut(jsonl::ReplayedChangeSet<'_>),
) -> io::Result<u64> {
    let (mut line, mut len) = (Vec::new(), 0);
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(len);
        }
        len += read as u64;
        let terminated = line.last() == Some(&b'\n');
        if terminated {
            line.pop();
        }
        walker.line(&line, terminated, apply);
    }
}

impl Loaded {
    /// What a checkpoint of this session is taken from.
    pub(crate) fn source(&self) -> checkpoint::Source<'_> {
        checkpoint::Source {
            state: &self.state,
            on_disk: self.on_disk,
            repair: &self.repair,
            len: self.len,
            spilled: &self.spilled,
        }
    }

    /// Replays the session's file (a missing file is an empty session), line by line: a large
    /// log is never held whole, and its entries become stubs as they are replayed ([`spill`]).
    pub(crate) fn load(ctx: &Ctx<'_>, sid: &str) -> Result<Loaded, StoreError> {
        let path = ctx.log_path(sid);
        let file = match File::open(&path) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err("read", &path, &e)),
        };
        let mut state = SessionState::default();
        let mut spilled = Spilled::default();
        let mut walker = jsonl::Walker::default();
        let mut len = 0u64;
        let on_disk = file.is_some();
        if let Some(file) = file {
            let size = file.metadata().map_err(|e| io_err("stat", &path, &e))?.len();
            let spill = size >= ctx.spill_above;
            let mut failed = None;
            let reader = io::BufReader::with_capacity(1 << 16, file);
            len = walk_lines(reader, &mut walker, &mut |set| {
                for record in set.records {
                    // A delta changes its entry's content: the content must be whole.
                    if let Record::Delta { delta, .. } = record {
                        if let Err(e) = spilled.hydrate(&path, &mut state, &delta.entry_id) {
                            failed.get_or_insert(e);
                        }
                    }
                    state.apply(record);
                }
                let spans: Vec<spill::Span> =
                    set.spans.iter().map(|&(at, n)| (at as u64, n)).collect();
                spilled.note(&mut state, set.records, &spans, spill);
                // What the writes kept: the newest `feed_retention` (a tombstone an earlier
                // version left after a delete: its one change).
                let keep = match state.holds_session() {
                    true => ctx.feed_retention,
                    false => session_core::feed::Retention { changes: 1, bytes: 0 },
                };
                state.feed.trim(keep);
            })
            .map_err(|e| io_err("read", &path, &e))?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        let (stats, repair) = walker.finish();
        if stats.skipped > 0 {
            eprintln!(
                "session-manager: fs store: {}: skipped {} of {} lines",
                path.display(),
                stats.skipped,
                stats.lines
            );
        }
        Ok(Loaded {
            state,
            path: Arc::from(path),
            file: None,
            on_disk,
            len,
            repair,
            // The first append after a load checks whether the file needs compacting.
            compact_at: len.max(ctx.compact_min),
            epoch: next_epoch(),
            compact_queued: false,
            spilled,
            checkpoint_len: None,
            checkpoint_queued: false,
        })
    }

    /// [`SessionState::path_select`] with the stubs' bodies read back from `log_path`.
    pub(crate) fn path_select(
        &self,
        log_path: &Path,
        sid: &str,
        leaf: &str,
        query: &session_core::path::PathSelect,
    ) -> Result<Vec<(usize, session_core::wire::SessionEntry)>, StoreError> {
        let mut found = self.state.path_select(sid, leaf, query)?;
        for (_, entry) in &mut found {
            self.spilled.fill(log_path, std::slice::from_mut(entry))?;
        }
        Ok(found)
    }

    /// Whether this session's writes leave stubs: its log is large.
    pub(crate) fn spills(&self, ctx: &Ctx<'_>) -> bool {
        self.len >= ctx.spill_above
    }

    /// Whether a checkpoint should be taken: the session is large and its checkpoint (if any)
    /// describes an older log.
    pub(crate) fn checkpoint_behind(&self, ctx: &Ctx<'_>) -> bool {
        self.on_disk && self.spills(ctx) && self.checkpoint_len != Some(self.len)
    }

    /// Bytes this session is charged against the cache budget: its estimated memory, about
    /// [`MEMORY_PER_FILE_BYTE`] times its file (the replayed entries, maps and allocator slack).
    /// Stubs are charged [`STUB_COST`] each, and only the rest of the file by its bytes.
    pub(crate) fn cost(&self) -> usize {
        let stubs = self.spilled.stubs();
        let held = (self.len as usize).saturating_sub(stubs.saturating_mul(STUB_COST));
        held.saturating_mul(MEMORY_PER_FILE_BYTE)
            .min((self.len as usize).saturating_mul(MEMORY_PER_FILE_BYTE))
            .saturating_add(stubs.saturating_mul(STUB_COST))
            .saturating_add(512)
    }

    fn open(&mut self, io: &dyn FsIo, path: &Path) -> io::Result<Arc<File>> {
        if let Some(file) = &self.file {
            return Ok(Arc::clone(file));
        }
        let file = Arc::new(io.open_append(path)?);
        self.file = Some(Arc::clone(&file));
        Ok(file)
    }

    /// Whether `writes` append with one `write` to the open file: on disk, opened, no tail
    /// repair due and no stub body to read back first (the inline write view's condition,
    /// `inline.rs`).
    pub(crate) fn writes_in_place(&self, writes: &[session_core::Write]) -> bool {
        use session_core::Write;
        let stub = |id: &str| self.spilled.span(id).is_some();
        self.on_disk
            && self.file.is_some()
            && self.repair == TailRepair::None
            && !writes.iter().any(|w| match w {
                Write::CommitAppend { entry, .. } => stub(entry.id()),
                Write::AppendDelta { delta, .. } => stub(&delta.entry_id),
                _ => false,
            })
    }

    /// Bytes of the session's file.
    pub(crate) fn file_len(&self) -> u64 {
        self.len
    }

    /// Appends the records of one change set (already applied to the cached state) in one write
    /// (its plain line, or a `begin` marker and its lines: [`jsonl::encode_records`]) after the
    /// tail repair (which also cuts an incomplete group a crash left), and flushes (`always`) or
    /// registers the bytes with `flusher` (`group`: the returned count is the write's ticket).
    pub(crate) fn append(
        &mut self,
        ctx: &Ctx<'_>,
        records: &[Record],
        flusher: &Flusher,
    ) -> Result<Option<u64>, StoreError> {
        let path = Arc::clone(&self.path);
        let file = self.open(ctx.io, &path).map_err(|e| io_err("open", &path, &e))?;
        let created = !self.on_disk;
        let mut line = Vec::new();
        let mut base = self.len;
        match self.repair {
            TailRepair::None => {}
            TailRepair::Newline => line.push(b'\n'),
            TailRepair::Truncate(at) => {
                ctx.io
                    .set_len(&file, &path, at as u64)
                    .map_err(|e| io_err("repair tail of", &path, &e))?;
                base = at as u64;
                self.len = base;
                self.repair = TailRepair::None;
            }
        }
        let records_at = base + line.len() as u64;
        let encoded = jsonl::encode_records(records);
        line.extend_from_slice(&encoded);
        let written = ctx.io.write(&file, &path, &line).map_err(|e| io_err("append to", &path, &e));
        let flushed = written.and_then(|()| {
            if created && ctx.sync != SyncMode::Never {
                sync_dir(ctx.io, ctx.data_dir)?;
            }
            ctx.flush(&file, &path, base, &line)
        });
        let journaled = match flushed {
            Ok(journaled) => journaled,
            Err(e) => {
                // Undo what may have reached the file; the next touch replays the disk either way.
                let _ = ctx.io.set_len(&file, &path, base);
                self.file = None;
                return Err(e);
            }
        };
        self.on_disk = true;
        self.len = base + line.len() as u64;
        self.repair = TailRepair::None;
        let spans = spill::written_spans(records_at, &encoded, records.len());
        let spill = self.spills(ctx);
        self.spilled.note(&mut self.state, records, &spans, spill);
        let ticket = (ctx.sync == SyncMode::Group)
            .then(|| flusher.register(&file, path, base, line.len() as u64, journaled));
        Ok(ticket)
    }

    /// Rewrites the file from the cached state's snapshot (tmp + rename), or removes it when the
    /// state is empty.
    pub(crate) fn rewrite(&mut self, ctx: &Ctx<'_>, sid: &str) -> Result<(), StoreError> {
        let path = ctx.log_path(sid);
        let durable = ctx.sync != SyncMode::Never;
        // The new file moves every line: stubs come back whole first (rare: deletions).
        self.spilled.hydrate_all(&path, &mut self.state)?;
        self.file = None;
        self.epoch = next_epoch();
        if self.state.is_empty() {
            if remove_file_if_exists(ctx.io, &path)? && durable {
                sync_dir(ctx.io, ctx.data_dir)?;
            }
            checkpoint::remove(&path);
            self.on_disk = false;
            self.len = 0;
        } else {
            let bytes = jsonl::encode_snapshot(&self.state);
            let mut tmp = path.clone().into_os_string();
            tmp.push(".tmp");
            write_atomic(ctx.io, &path, Path::new(&tmp), &bytes, durable)?;
            if durable {
                sync_dir(ctx.io, ctx.data_dir)?;
            }
            self.on_disk = true;
            self.len = bytes.len() as u64;
            self.compact_at = (2 * self.len).max(ctx.compact_min);
        }
        self.repair = TailRepair::None;
        Ok(())
    }

    /// Whether a checkpoint job should be queued ([`Self::checkpoint_behind`] and none queued
    /// yet); marks it queued.
    pub(crate) fn wants_checkpoint(&mut self, ctx: &Ctx<'_>) -> bool {
        if self.checkpoint_queued || !self.checkpoint_behind(ctx) {
            return false;
        }
        self.checkpoint_queued = true;
        true
    }

    /// Whether the file passed its compaction check point and no job is queued for it yet (the
    /// caller then queues one for the background compactor, [`super::compact`], which checks the
    /// live snapshot and rewrites when the file is more than twice as large: disk ≤ 2× live). The
    /// check point doubles with the live size, so the snapshot work is amortized O(1) per byte.
    pub(crate) fn wants_compaction(&mut self) -> bool {
        if self.compact_queued || self.len <= self.compact_at {
            return false;
        }
        self.compact_queued = true;
        true
    }
}

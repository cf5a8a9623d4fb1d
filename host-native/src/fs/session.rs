//! One session's log file and its cached state: lazy load by replay, append with tail repair,
//! snapshot rewrite (tmp + rename) and compaction. Disk first, cache second: the caller plans a
//! change set into the cached state in place (no copy of a large session per write) under the
//! session lock, then these functions write it; on any failure the caller drops the cached state
//! so the next touch replays what the disk really holds. Nobody observes the state in between.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use session_core::jsonl::{self, enc, TailRepair};
use session_core::record::{Record, SessionState};
use session_core::StoreError;

use super::compact::next_epoch;
use super::io::{io_err, remove_file_if_exists, sync_dir, write_atomic};
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
#[derive(Debug, Default)]
pub(crate) struct Slot {
    pub(crate) inner: Mutex<Option<Box<Loaded>>>,
    pub(crate) last_used: AtomicU64,
}

/// A loaded session: the replayed state and what is known about its file.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) state: SessionState,
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
}

/// Where a session lives and how its writes are flushed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) data_dir: &'a Path,
    pub(crate) sync: SyncMode,
    pub(crate) compact_min: u64,
    pub(crate) io: &'a dyn FsIo,
}

impl Ctx<'_> {
    pub(crate) fn log_path(&self, sid: &str) -> PathBuf {
        self.data_dir.join(format!("{}.jsonl", enc(sid)))
    }

    fn flush(&self, file: &Arc<File>, path: &Path) -> Result<(), StoreError> {
        match self.sync {
            SyncMode::Always | SyncMode::Group => {
                self.io.sync_data(file, path).map_err(|e| io_err("flush", path, &e))
            }
            SyncMode::Never => Ok(()),
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

impl Loaded {
    /// Replays the session's file (a missing file is an empty session).
    pub(crate) fn load(ctx: &Ctx<'_>, sid: &str) -> Result<Loaded, StoreError> {
        let path = ctx.log_path(sid);
        let bytes = match fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err("read", &path, &e)),
        };
        let bytes = bytes.as_deref();
        let (state, stats, repair) = jsonl::replay_with_repair(bytes.unwrap_or_default());
        if stats.skipped > 0 {
            eprintln!(
                "session-manager: fs store: {}: skipped {} of {} lines",
                path.display(),
                stats.skipped,
                stats.lines
            );
        }
        let len = bytes.map_or(0, |b| b.len() as u64);
        Ok(Loaded {
            state,
            file: None,
            on_disk: bytes.is_some(),
            len,
            repair,
            // The first append after a load checks whether the file needs compacting.
            compact_at: len.max(ctx.compact_min),
            epoch: next_epoch(),
            compact_queued: false,
        })
    }

    /// Bytes this session is charged against the cache budget: its estimated memory, about
    /// [`MEMORY_PER_FILE_BYTE`] times its file (the replayed entries, maps and allocator slack).
    pub(crate) fn cost(&self) -> usize {
        (self.len as usize).saturating_mul(MEMORY_PER_FILE_BYTE).saturating_add(512)
    }

    fn open(&mut self, io: &dyn FsIo, path: &Path) -> io::Result<Arc<File>> {
        if let Some(file) = &self.file {
            return Ok(Arc::clone(file));
        }
        let file = Arc::new(io.open_append(path)?);
        self.file = Some(Arc::clone(&file));
        Ok(file)
    }

    /// Bytes of the session's file.
    pub(crate) fn file_len(&self) -> u64 {
        self.len
    }

    /// Appends the records of one change set (already applied to the cached state) in one write
    /// (its plain line, or a `begin` marker and its lines: [`jsonl::encode_records`]) after the
    /// tail repair (which also cuts an incomplete group a crash left), and flushes.
    pub(crate) fn append(
        &mut self,
        ctx: &Ctx<'_>,
        sid: &str,
        records: &[Record],
    ) -> Result<(), StoreError> {
        let path = ctx.log_path(sid);
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
        line.extend_from_slice(&jsonl::encode_records(records));
        let written = ctx.io.write(&file, &path, &line).map_err(|e| io_err("append to", &path, &e));
        let flushed = written.and_then(|()| {
            if created && ctx.sync != SyncMode::Never {
                sync_dir(ctx.io, ctx.data_dir)?;
            }
            ctx.flush(&file, &path)
        });
        if let Err(e) = flushed {
            // Undo what may have reached the file; the next touch replays the disk either way.
            let _ = ctx.io.set_len(&file, &path, base);
            self.file = None;
            return Err(e);
        }
        self.on_disk = true;
        self.len = base + line.len() as u64;
        self.repair = TailRepair::None;
        Ok(())
    }

    /// Rewrites the file from the cached state's snapshot (tmp + rename), or removes it when the
    /// state is empty.
    pub(crate) fn rewrite(&mut self, ctx: &Ctx<'_>, sid: &str) -> Result<(), StoreError> {
        let path = ctx.log_path(sid);
        let durable = ctx.sync != SyncMode::Never;
        self.file = None;
        self.epoch = next_epoch();
        if self.state.is_empty() {
            if remove_file_if_exists(ctx.io, &path)? && durable {
                sync_dir(ctx.io, ctx.data_dir)?;
            }
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

//! `session-store-fs`: the durable fs store (contract §5.2–§5.5, issue 3), `FsStore` implementing
//! [`session_core::Store`]. One `<enc(id)>.jsonl` log per session under `data_dir`; record and
//! replay semantics are session-core's ([`session_core::jsonl`], `SessionState::apply`); this
//! module owns only files, locks, flushing, caching and the catalog.
//!
//! * **Crash atomicity (D8):** a change set is one write — its plain record line, or a `begin`
//!   marker and one plain line per record when it produces several (see [`session_core::jsonl`]
//!   for the format and why; replay drops an incomplete group and the tail repair cuts it before
//!   the next append) — or one tmp + rename rewrite. Attachment writes are ordered around that commit point: puts before it
//!   (a crash leaves only unreachable files), single deletes after it, and a session delete
//!   trashes the folder first and rolls it back on open if the log never went away
//!   (`attachments.rs`).
//! * **Durability:** [`SyncMode`]; the default `group` flushes before answering, one flush for
//!   the writes of a session that arrive while its previous flush runs (`flush.rs`, [`Deferred`]);
//!   different sessions flush concurrently (`sync.rs`).
//! * **Concurrency:** one `session::Slot` (mutex + cached state) per session in a sharded map:
//!   readers and writers of different sessions never wait for each other.
//! * **Memory:** sessions load on first touch; an LRU pass evicts idle sessions past the budget.
//! * **Indexed reads:** a message page is a window of the cached state's path index, a list page
//!   one of the catalog's list order (issue 12).
//! * **Listing:** `catalog.rs` (and `lifecycle_ids.rs`: which files a catalog rebuild reads whole);
//!   **compaction:** when a file exceeds twice its live snapshot.

mod apply;
mod attachment_writes;
mod attachments;
mod backend;
mod checkpoint;
mod compact;
mod config;
mod deferred;
mod faulty;
mod flush;
mod group_wait;
mod inline;
mod io;
mod journal;
mod lifecycle_ids;
mod meta_catalog;
mod offline;
mod search;
mod session;
mod spill;
mod sync;
mod transact;
mod vfs;

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use session_core::lifecycle::Lifecycle;
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::usage::Tally;
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Applied, ChangeSet, Store, StoreError};

use attachments::AttachmentFiles;
use checkpoint::{Checkpoint, ColdView};
use compact::Compactor;
use flush::Ticket;
use io::io_err;
use meta_catalog::Catalog;
use session::{Ctx, Loaded, Slot, COMPACT_MIN_BYTES};

pub use config::{default_data_dir, resolve_data_dir, FsAdapterConfig, DEFAULT_DATA_DIR};
pub use deferred::Deferred;
pub use faulty::{Fault, FaultyIo, IoOp};
pub use flush::Flushes;
pub use journal::Landing;
pub use lifecycle_ids::LIFECYCLE_IDS_FILE;
pub use meta_catalog::CATALOG_FILE;
pub use offline::{Offline, WholeSession};
pub use search::{Progress as SearchProgress, INDEX_DIR as SEARCH_INDEX_DIR};
pub use sync::SyncMode;
pub use vfs::{FsIo, RealIo};

const SHARDS: usize = 16;

/// Replays what a crash left only in the data_dir's journal (`fsync: group`, `journal/`) into its
/// session files, unless a store of this process has the data_dir open: the offline commands
/// (export, import, migrate) run it first, as opening a store does. The session files it changed.
pub fn recover_journal(data_dir: &std::path::Path) -> Result<Vec<String>, StoreError> {
    journal::recover_if_left(data_dir, &RealIo)
}

/// Default [`FsConfig::spill_above`]: a session this large would take ~12 MB held whole.
pub const SPILL_ABOVE_BYTES: u64 = 4 << 20;

/// Configuration of an [`FsStore`].
#[derive(Debug, Clone)]
pub struct FsConfig {
    pub data_dir: PathBuf,
    pub sync: SyncMode,
    /// Cache budget: estimated memory of the sessions held replayed (about 3 bytes per byte of
    /// their files; the session touched last always stays).
    pub cache_bytes: usize,
    /// At most this many sessions held replayed (each also holds an open file); by default 1024,
    /// and at most half the process's open-file limit ([`default_max_cached_sessions`]).
    pub max_cached_sessions: usize,
    /// Files smaller than this are never compacted.
    pub compact_min_bytes: u64,
    /// How much of each session's feed a replay keeps (the worker sets its `feed_retention` and
    /// `feed_retention_bytes`; writes trim to the retention they are given).
    pub feed_retention: session_core::feed::Retention,
    /// Sessions whose log reaches this many bytes keep their entries' bodies on disk and only
    /// stubs in memory (`spill.rs`); 0 spills every session (tests).
    pub spill_above: u64,
    /// Every write-side file operation goes through this seam ([`RealIo`]; tests inject faults).
    pub io: Arc<dyn FsIo>,
    /// With `fsync: group`: the journal's largest size before it rolls over (tests make it small).
    pub journal_bytes: u64,
    /// Keep a search index beside the logs (`search/`); without one `session::search` scans.
    pub search_index: bool,
}

/// 1024, or half the process's soft open-file limit when that is lower (at least 16): every cached
/// session holds its file open, and the other half stays for sockets, attachments and compaction.
/// Past the limit every new write would fail with `EMFILE` (a systemd service starts with 1024).
pub fn default_max_cached_sessions() -> usize {
    const MAX: usize = 1024;
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, Resource};
        match getrlimit(Resource::Nofile).current {
            Some(soft) => usize::try_from(soft / 2).unwrap_or(MAX).clamp(16, MAX),
            None => MAX,
        }
    }
    #[cfg(not(unix))]
    MAX
}

impl FsConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        FsConfig {
            data_dir: data_dir.into(),
            sync: SyncMode::default(),
            cache_bytes: 32 << 20,
            max_cached_sessions: default_max_cached_sessions(),
            compact_min_bytes: COMPACT_MIN_BYTES,
            spill_above: SPILL_ABOVE_BYTES,
            feed_retention: session_core::feed::Retention::default(),
            io: Arc::new(RealIo),
            journal_bytes: journal::MAX_CAP,
            search_index: true,
        }
    }

    pub fn io(mut self, io: Arc<dyn FsIo>) -> Self {
        self.io = io;
        self
    }

    pub fn sync(mut self, sync: SyncMode) -> Self {
        self.sync = sync;
        self
    }
}

/// The durable fs store. `Send + Sync`; every method takes `&self`.
#[derive(Debug)]
pub struct FsStore {
    cfg: FsConfig,
    shards: Vec<RwLock<HashMap<String, Arc<Slot>>>>,
    hasher: RandomState,
    catalog: Catalog,
    attachments: AttachmentFiles,
    tick: AtomicU64,
    evicting: Mutex<()>,
    compactor: Compactor,
    feed_retention: std::sync::atomic::AtomicUsize,
    feed_retention_bytes: AtomicU64,
    /// `fsync: group`: the data_dir's journal (dropped after the compactor, which may reset it).
    journal: Option<Arc<journal::JournalHandle>>,
    /// The search index, when kept and this store could open it.
    search: Option<search::FsSearch>,
}

impl FsStore {
    /// Opens (creating if needed) `cfg.data_dir`. Replays nothing: sessions load on first touch.
    pub fn open(cfg: FsConfig) -> Result<Self, StoreError> {
        cfg.io.create_dir_all(&cfg.data_dir).map_err(|e| io_err("create", &cfg.data_dir, &e))?;
        // Before anything reads a session file: what a crash left only in the journal goes back.
        let journal = if cfg.sync == SyncMode::Group {
            let initial = journal::INITIAL_CAP.min(cfg.journal_bytes);
            Some(journal::shared(&cfg.data_dir, &cfg.io, initial, cfg.journal_bytes)?.0)
        } else {
            journal::recover_if_left(&cfg.data_dir, &*cfg.io)?;
            None
        };
        let attachments = AttachmentFiles::new(&cfg.data_dir, Arc::clone(&cfg.io));
        attachments.recover(&cfg.data_dir)?;
        let resets = journal.as_deref().map(|handle| Arc::clone(handle.journal()));
        let search = match cfg.search_index {
            true => search::FsSearch::open(&cfg.data_dir)
                .inspect_err(|e| eprintln!("session-manager: fs store: searching by scan: {e}"))
                .ok(),
            false => None,
        };
        Ok(FsStore {
            journal,
            search,
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            hasher: RandomState::new(),
            catalog: Catalog::default(),
            attachments,
            tick: AtomicU64::new(0),
            evicting: Mutex::new(()),
            feed_retention: std::sync::atomic::AtomicUsize::new(cfg.feed_retention.changes),
            feed_retention_bytes: AtomicU64::new(cfg.feed_retention.bytes),
            compactor: Compactor::start(
                &cfg.data_dir,
                cfg.sync != SyncMode::Never,
                cfg.compact_min_bytes,
                Arc::clone(&cfg.io),
                resets,
            ),
            cfg,
        })
    }

    pub fn config(&self) -> &FsConfig {
        &self.cfg
    }

    /// The feed retention replays keep from now on (a hot reload of `feed_retention` or
    /// `feed_retention_bytes`).
    pub fn set_feed_retention(&self, retention: session_core::feed::Retention) {
        self.feed_retention.store(retention.changes.max(1), Ordering::Relaxed);
        self.feed_retention_bytes.store(retention.bytes, Ordering::Relaxed);
    }

    /// Writes the catalog now (it is also written on drop).
    pub fn flush_catalog(&self) -> Result<(), StoreError> {
        self.catalog.save(&*self.cfg.io, &self.cfg.data_dir)
    }

    /// Syncs the session files the journal covers and empties it (`fsync: group`; before a
    /// shutdown: the data_dir then holds everything in its session files, as v1.0.32 reads it).
    /// After an erasure ([`Store::erase_traces`]): the catalog rewritten without the erased
    /// sessions' metas, and the journal rolled over and zeroed.
    fn scrub(&self) -> Result<(), StoreError> {
        self.flush_catalog()?;
        match &self.journal {
            Some(handle) => handle.journal().scrub(),
            None => Ok(()),
        }
    }

    pub fn flush_journal(&self) -> Result<(), StoreError> {
        match &self.journal {
            Some(handle) => handle.journal().empty(),
            None => Ok(()),
        }
    }

    /// For a write call with `fsync: group`, from before it takes its session's lock until its
    /// write landed: while one lives, the journal's flusher waits (briefly) for its record, so
    /// one flush covers it and the records already waiting (`journal/`). `None` without a
    /// journal.
    pub fn landing(&self) -> Option<journal::Landing> {
        self.journal.as_deref().map(|handle| handle.journal().landing())
    }

    /// Takes the checkpoints of large sessions that are behind (before a shutdown: the next
    /// start opens them without a replay).
    pub fn flush_checkpoints(&self) {
        for (sid, slot) in self.all_slots() {
            if let Some(loaded) = lock(&slot.inner).as_deref_mut() {
                self.checkpoint_now(&sid, loaded);
            }
        }
    }

    /// Blocks until every queued background compaction has finished.
    pub fn wait_for_compactions(&self) {
        self.compactor.wait_idle();
    }

    /// Runs every queued background job, checkpoints included, and waits for them.
    #[cfg(test)]
    pub(crate) fn drain_background(&self) {
        self.compactor.drain();
    }

    /// Number of sessions currently held replayed in memory.
    pub fn cached_sessions(&self) -> usize {
        self.all_slots().iter().filter(|(_, s)| lock(&s.inner).is_some()).count()
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            data_dir: &self.cfg.data_dir,
            sync: self.cfg.sync,
            compact_min: self.cfg.compact_min_bytes,
            spill_above: self.cfg.spill_above,
            feed_retention: session_core::feed::Retention {
                changes: self.feed_retention.load(Ordering::Relaxed),
                bytes: self.feed_retention_bytes.load(Ordering::Relaxed),
            },
            io: &*self.cfg.io,
            journal: self.journal.as_deref().map(journal::JournalHandle::journal),
        }
    }

    fn slot(&self, sid: &str) -> Arc<Slot> {
        if let Some(slot) = self.existing_slot(sid) {
            return slot;
        }
        let mut map = self.shard(sid).write().unwrap_or_else(|p| p.into_inner());
        Arc::clone(map.entry(sid.to_string()).or_default())
    }

    fn shard(&self, sid: &str) -> &RwLock<HashMap<String, Arc<Slot>>> {
        &self.shards[(self.hasher.hash_one(sid) as usize) % SHARDS]
    }

    /// The session's slot if it has one (never makes one).
    fn existing_slot(&self, sid: &str) -> Option<Arc<Slot>> {
        self.shard(sid).read().unwrap_or_else(|p| p.into_inner()).get(sid).cloned()
    }

    fn all_slots(&self) -> Vec<(String, Arc<Slot>)> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let map = shard.read().unwrap_or_else(|p| p.into_inner());
            out.extend(map.iter().map(|(sid, slot)| (sid.clone(), Arc::clone(slot))));
        }
        out
    }

    /// Runs `f` on the session's loaded state, loading it first if needed.
    fn with_loaded<R>(
        &self,
        sid: &str,
        f: impl FnOnce(&mut Option<Box<Loaded>>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let slot = self.slot(sid);
        let mut loaded_now = false;
        let result = {
            let mut guard = lock(&slot.inner);
            self.clean_after_failed_flush(sid, &slot, &mut guard);
            if guard.is_none() {
                *guard = Some(self.load(sid, &slot)?);
                loaded_now = true;
            }
            slot.last_used.store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
            f(&mut guard)
        };
        if loaded_now {
            self.evict_if_needed(&slot);
        }
        result
    }

    /// Under the slot lock, after a failed group flush ([`flush`]): the log is cut back to what
    /// is durable, the cached state and cold view go, the catalog re-reads the session.
    fn clean_after_failed_flush(&self, sid: &str, slot: &Slot, guard: &mut Option<Box<Loaded>>) {
        if slot.flusher.clean_after_failure(&*self.cfg.io) {
            *guard = None;
            lock(&slot.cold).take();
            self.catalog.refresh(&self.cfg.data_dir, sid);
        }
    }

    /// Cuts back what failed group flushes left, now (the writer or reader a failed flush
    /// reached calls it, so listings and other stores on the data_dir see the disk at once).
    pub fn clean_failed_flushes(&self) {
        for (sid, slot) in self.all_slots() {
            if slot.flusher.poisoned() {
                self.clean_after_failed_flush(&sid, &slot, &mut lock(&slot.inner));
            }
        }
    }

    /// What a reader of `sid` may just have seen before it was durable: with `fsync: group` an
    /// append is visible under the slot lock before its flush returns. Waiting for it fails when
    /// a flush failed meanwhile (the reader saw a write that is gone; the read fails as
    /// `session/storage`).
    pub fn read_settles(&self, sid: &str) -> Option<Flushes> {
        let slot = self.existing_slot(sid)?;
        let upto = slot.flusher.pending()?;
        let ticket = Ticket { flusher: Arc::clone(&slot.flusher), upto };
        Some(Flushes::new(vec![ticket], Arc::clone(&self.cfg.io)))
    }

    /// Applies a change set like [`Store::apply`] but leaves the group flush of its appends to
    /// the caller: their tickets go to `tickets`, and the write is durable once each
    /// [`Ticket::wait`] returned `Ok` (the worker waits after releasing the session lock, so the
    /// session's next writers are decided meanwhile and share the flush).
    pub(crate) fn apply_deferred(
        &self,
        changes: &ChangeSet,
        tickets: &mut Vec<Ticket>,
    ) -> Result<Applied, StoreError> {
        let sid = &changes.session_id;
        let slot = self.slot(sid);
        self.with_loaded(sid, |guard| self.apply_held(&slot, guard, changes, tickets))
    }

    /// [`Self::apply_locked`] with the slot lock held by the caller, then the background jobs the
    /// write calls for; its group flush ticket goes to `tickets`.
    fn apply_held(
        &self,
        slot: &Arc<Slot>,
        guard: &mut Option<Box<Loaded>>,
        changes: &ChangeSet,
        tickets: &mut Vec<Ticket>,
    ) -> Result<Applied, StoreError> {
        let sid = &changes.session_id;
        let applied = self.apply_locked(guard, &slot.flusher, changes);
        if let Some(loaded) = guard.as_deref_mut() {
            if loaded.wants_compaction() {
                self.compactor.submit(sid, Arc::clone(slot));
            }
            if loaded.wants_checkpoint(&self.ctx()) {
                self.compactor.submit_checkpoint(sid, Arc::clone(slot));
            }
        }
        let (applied, upto) = applied?;
        if let Some(upto) = upto {
            tickets.push(Ticket { flusher: Arc::clone(&slot.flusher), upto });
        }
        Ok(applied)
    }

    /// Replays a session (its slot's `inner` held, empty); its cold view, if any, goes.
    fn load(&self, sid: &str, slot: &Arc<Slot>) -> Result<Box<Loaded>, StoreError> {
        let ctx = self.ctx();
        let cold = lock(&slot.cold).take();
        let mut loaded = Box::new(Loaded::load(&ctx, sid)?);
        loaded.checkpoint_len = cold.map(|view| view.log_len()).filter(|&len| len == loaded.len);
        if loaded.wants_checkpoint(&ctx) {
            self.compactor.submit_checkpoint(sid, Arc::clone(slot));
        }
        Ok(loaded)
    }

    /// Takes and writes a large session's checkpoint now, if it is behind (before the state
    /// goes: eviction, close).
    fn checkpoint_now(&self, sid: &str, loaded: &mut Loaded) {
        if !loaded.checkpoint_behind(&self.ctx()) {
            return;
        }
        let written = Checkpoint::take(loaded.source(), &self.ctx().log_path(sid))
            .and_then(|taken| taken.map(|c| c.write().map(|()| c.log_len())).transpose());
        match written {
            Ok(len) => loaded.checkpoint_len = len.or(loaded.checkpoint_len),
            Err(e) => eprintln!("session-manager: fs store: checkpoint of {sid:?} failed: {e}"),
        }
    }

    fn read<R>(&self, sid: &str, f: impl FnOnce(&Loaded) -> R) -> Result<R, StoreError> {
        self.with_loaded(sid, |slot| slot.as_deref().map(f).ok_or_else(not_loaded))
    }

    /// A read a cold view may answer (`cold` gives `None` when it cannot): from the session's
    /// checkpoint while it is not replayed, else as [`Self::read`].
    fn read_cold<R>(
        &self,
        sid: &str,
        cold: impl FnOnce(&ColdView) -> Option<Result<R, StoreError>>,
        hot: impl FnOnce(&Loaded) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let slot = self.slot(sid);
        let mut opened_now = false;
        let answer = {
            let mut guard = lock(&slot.inner);
            self.clean_after_failed_flush(sid, &slot, &mut guard);
            let mut view = lock(&slot.cold);
            if guard.is_none() && view.is_none() && self.cfg.spill_above < u64::MAX {
                *view = ColdView::open(&self.ctx().log_path(sid)).map(Box::new);
                opened_now = view.is_some();
            }
            match (guard.is_none(), view.as_deref()) {
                (true, Some(view)) => {
                    slot.last_used
                        .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
                    cold(view)
                }
                _ => None,
            }
        };
        if opened_now {
            self.evict_if_needed(&slot);
        }
        match answer {
            Some(answer) => answer,
            None => self.read(sid, hot)?,
        }
    }

    /// Drops the least recently used sessions until the cache is under 3/4 of its budget; never
    /// `current`, the session just loaded (a session larger than the whole budget would otherwise
    /// be replayed again on every touch).
    fn evict_if_needed(&self, current: &Arc<Slot>) {
        let Ok(_only_one) = self.evicting.try_lock() else { return };
        let mut loaded: Vec<(u64, usize, String, Arc<Slot>)> = Vec::new();
        for (sid, slot) in self.all_slots() {
            if Arc::ptr_eq(&slot, current) {
                continue;
            }
            let cost = match slot.inner.try_lock() {
                Ok(guard) => guard
                    .as_deref()
                    .map(Loaded::cost)
                    .or_else(|| lock(&slot.cold).as_deref().map(ColdView::cost)),
                Err(_) => None,
            };
            if let Some(cost) = cost {
                loaded.push((slot.last_used.load(Ordering::Relaxed), cost, sid, slot));
            }
        }
        let (mut bytes, mut count) = (loaded.iter().map(|l| l.1).sum::<usize>(), loaded.len());
        if bytes <= self.cfg.cache_bytes && count <= self.cfg.max_cached_sessions {
            return;
        }
        loaded.sort_by_key(|l| l.0);
        let (byte_goal, count_goal) =
            (self.cfg.cache_bytes / 4 * 3, self.cfg.max_cached_sessions / 4 * 3);
        for (_, cost, sid, slot) in loaded {
            if bytes <= byte_goal && count <= count_goal {
                break;
            }
            if let Ok(mut guard) = slot.inner.try_lock() {
                self.clean_after_failed_flush(&sid, &slot, &mut guard);
                let held = guard.take().map(|mut loaded| self.checkpoint_now(&sid, &mut loaded));
                let cold = lock(&slot.cold).take();
                if held.is_some() || cold.is_some() {
                    bytes -= cost;
                    count -= 1;
                }
            }
        }
        self.prune_idle_slots();
    }

    /// Drops the slots of sessions that are not cached and that no thread holds, so memory and
    /// the eviction pass follow the cached sessions, not every session ever touched. Under each
    /// shard's write lock nobody can take a new reference, so a slot held only by the map is
    /// unused; the next touch makes a fresh one.
    fn prune_idle_slots(&self) {
        for shard in &self.shards {
            let mut map = shard.write().unwrap_or_else(|p| p.into_inner());
            map.retain(|_, slot| {
                Arc::strong_count(slot) > 1
                    || slot.flusher.poisoned()
                    || !matches!(slot.inner.try_lock().as_deref(), Ok(None))
                    || lock(&slot.cold).is_some()
            });
        }
    }
}

/// A slot that [`FsStore::with_loaded`] should have loaded is empty (a bug).
pub(crate) fn not_loaded() -> StoreError {
    StoreError::Internal("fs store: session not loaded".into())
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for FsStore {
    /// Cuts back what failed group flushes left, saves the catalog and the checkpoints of large
    /// sessions that are behind.
    fn drop(&mut self) {
        self.clean_failed_flushes();
        self.flush_checkpoints();
        if let Err(e) = self.catalog.save(&*self.cfg.io, &self.cfg.data_dir) {
            eprintln!("session-manager: fs store: could not save the catalog: {e}");
        }
    }
}

impl Store for FsStore {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read_cold(
            session_id,
            |view| Some(Ok(Some(view.meta().clone()))),
            |l| Ok(l.state.meta.clone()),
        )
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.catalog.list(&self.cfg.data_dir)
    }

    fn lifecycle(&self, session_id: &str) -> Result<Lifecycle, StoreError> {
        // A cold view is of a session whose lifecycle is empty (`Checkpoint::take`).
        self.read_cold(
            session_id,
            |_| Some(Ok(Lifecycle::default())),
            |l| Ok(l.state.lifecycle.clone()),
        )
    }

    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.catalog.lifecycles(&self.cfg.data_dir)
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        let path = self.ctx().log_path(session_id);
        self.read_cold(
            session_id,
            |view| Some(view.entry(entry_id)),
            |l| l.spilled.body(&path, &l.state, entry_id),
        )
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let path = self.ctx().log_path(session_id);
        self.read(session_id, |l| {
            let mut entries: Vec<SessionEntry> = l.state.entries.values().cloned().collect();
            l.spilled.fill(&path, &mut entries)?;
            Ok(entries)
        })?
    }

    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        self.read_cold(
            session_id,
            |view| Some(Ok(view.leaf().map(String::from))),
            |l| Ok(l.state.leaf.clone()),
        )
    }

    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        let slot = self.slot(session_id);
        let _guard = lock(&slot.inner);
        self.attachments.get(session_id, attachment_id)
    }

    fn get_attachment_meta(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        let slot = self.slot(session_id);
        let _guard = lock(&slot.inner);
        self.attachments.get_meta(session_id, attachment_id)
    }

    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        let slot = self.slot(session_id);
        let _guard = lock(&slot.inner);
        self.attachments.list(session_id)
    }

    fn erase_traces(&self, session_ids: &[String]) -> Result<(), StoreError> {
        // A rewrite or compaction a crash interrupted may have left a copy of the log beside it.
        for sid in session_ids {
            let log = self.ctx().log_path(sid);
            for suffix in [".tmp", ".compact.tmp", ".ckpt", ".ckpt.tmp"] {
                let mut stray = log.clone().into_os_string();
                stray.push(suffix);
                let stray = std::path::PathBuf::from(stray);
                io::remove_file_if_exists(&*self.cfg.io, &stray)?;
            }
        }
        if let Some(search) = &self.search {
            search.erase(session_ids)?;
        }
        self.scrub()
    }

    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        let path = self.ctx().log_path(session_id);
        self.read(session_id, |l| {
            l.state.feed_page_with(after_seq, limit, |id| l.spilled.body(&path, &l.state, id))
        })?
    }

    fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        self.read_cold(
            session_id,
            |view| view.locate(leaf, entry_id).map(Ok),
            |l| l.state.path_locate(session_id, leaf, entry_id),
        )
    }

    fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        let path = self.ctx().log_path(session_id);
        self.read_cold(
            session_id,
            |view| view.select(leaf, query),
            |l| l.path_select(&path, session_id, leaf, query),
        )
    }

    fn usage(&self, session_id: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        // A cold view keeps no totals: the session is replayed once, then answers from them.
        self.read_cold(session_id, |_| None, |l| l.state.usage(session_id, leaf))
    }

    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        self.catalog.page(&self.cfg.data_dir, query)
    }

    fn listed_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.catalog.get(&self.cfg.data_dir, session_id)
    }

    fn search_index(&self) -> Option<&dyn session_core::search::index::SearchIndex> {
        self.search.as_ref().map(|s| s as &dyn session_core::search::index::SearchIndex)
    }

    fn transact(
        &self,
        session_id: &str,
        decide: session_core::store::Decide<'_>,
    ) -> Result<Option<Applied>, session_core::SessionError> {
        self.transact_in_slot(session_id, decide)?
    }

    /// Writes, then waits for the write's group flush (when there is one).
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let mut tickets = Vec::new();
        let applied = self.apply_deferred(changes, &mut tickets)?;
        for ticket in &tickets {
            if let Err(e) = ticket.wait(&*self.cfg.io) {
                self.clean_failed_flushes();
                return Err(e);
            }
        }
        Ok(applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_core::conformance::sample_meta;
    use session_core::Write;

    /// Memory follows the cached sessions, not every session ever touched: evicted sessions'
    /// slots leave the map (issue 12: RSS after touching 100k sessions).
    #[test]
    fn evicted_sessions_leave_no_slot_behind() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
        cfg.max_cached_sessions = 8;
        let store = FsStore::open(cfg).expect("open");
        for i in 0..200 {
            let sid = format!("s{i}");
            let put = ChangeSet::new(&sid).with(Write::PutMeta(sample_meta(&sid, i)));
            store.apply(&put).expect("apply");
        }
        let slots = store.all_slots().len();
        assert!(slots <= 8, "{slots} slots held for {} cached sessions", store.cached_sessions());
        // The pruned sessions still read back.
        assert_eq!(store.get_meta("s3").expect("read").map(|m| m.created_at), Some(3));
        assert_eq!(store.list_metas().expect("list").len(), 200);
    }

    /// A replay keeps the newest `feed_retention` changes, not every change the log holds
    /// (the memory of a large session after a restart).
    #[test]
    fn a_replay_keeps_only_the_retained_feed() {
        use session_core::feed::PendingChange;
        use session_core::feed::Retention;
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
        store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
        for n in 0..40 {
            let change = PendingChange::Known { change_type: "t".into(), payload: n.into() };
            let feed = Write::Feed {
                timestamp: n,
                retention: Retention::default(),
                epoch: None,
                changes: vec![change],
            };
            store.apply(&ChangeSet::new("s").with(feed)).expect("feed");
        }
        assert_eq!(store.changes("s", 0, 100).expect("page").changes.len(), 40);
        drop(store);
        let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
        cfg.feed_retention = Retention { changes: 8, ..Retention::default() };
        let store = FsStore::open(cfg).expect("reopen");
        let page = store.changes("s", 0, 100).expect("page");
        assert_eq!((page.latest_seq, page.truncated), (40, true));
        let kept = store.changes("s", 32, 100).expect("page");
        assert_eq!((kept.truncated, kept.changes.len(), kept.changes[0].seq), (false, 8, 33));
    }
}

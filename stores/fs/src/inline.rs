//! The non-blocking view of an [`FsStore`]: lets the worker run a read on the engine connection's
//! own thread (no `spawn_blocking` hand-off and back, which costs two thread wake-ups per call)
//! whenever the store can serve it from memory, and tells it to go to a blocking thread otherwise.
//!
//! The view ([`FsStore::inline`]) serves a store read only when that cannot wait on the disk or on
//! another thread:
//!
//! * the session's slot lock is free (`try_lock`) — a busy slot means another thread is writing,
//!   flushing (`fsync: always`), compacting or loading it; with `fsync: group` a write's flush
//!   runs after the lock is released, and the worker holds a read's answer until what it saw is
//!   durable (`FsStore::read_settles`); a slot whose group flush failed refuses (its log is cut back on
//!   a blocking thread first);
//! * the session is cached, or its log is missing or small enough to replay on the spot
//!   ([`INLINE_LOAD_MAX_BYTES`]); `list_entries` only for sessions up to
//!   [`INLINE_SCAN_MAX_BYTES`] (an O(n) copy);
//! * a large session's stub bodies (`spill.rs`) and an open cold view (`checkpoint.rs`) only
//!   for windows of up to [`INLINE_STUB_READS`] entries: positioned reads of a log the page
//!   cache holds (it was just written or read), a page, never a walk at the largest limit; a
//!   cold view is never opened here (a file read);
//! * never `list_metas` (may build the catalog from the directory) nor attachments (file IO);
//!   `list_page` only from a built catalog that is not locked;
//! * writes only through [`FsStore::inline_write`] (`fsync: group` or `never`: the write is one
//!   `write` into the page cache, its flush waited for later, `flush.rs`), and only appends to a
//!   session that is cached and on disk with its file open, that read back no stub body, and
//!   whose flusher is sound; deletes and attachment writes refuse. After the view wrote, nothing refuses any more
//!   (a rerun would write twice): a later refusal is an internal error instead.
//!
//! Anything else *refuses*: it returns an error and marks the view, and the caller reruns the
//! whole call on a blocking thread against the store itself. Since the view never writes, the
//! rerun starts from the same disk state.

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};

use session_core::lifecycle::Lifecycle;
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::usage::Tally;
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Applied, ChangeSet, Store, StoreError, Write};

use super::checkpoint::ColdView;
use super::flush::{Flushes, Ticket};
use super::session::{Loaded, Slot};
use super::sync::SyncMode;
use super::{not_loaded, FsStore};

/// Largest log replayed on the calling thread when a session is first touched.
pub const INLINE_LOAD_MAX_BYTES: u64 = 64 * 1024;
/// Largest session whose full entry list is copied on the calling thread.
pub const INLINE_SCAN_MAX_BYTES: u64 = 256 * 1024;
/// Most stub bodies (positioned reads of a log the page cache holds: it was just written or
/// read) one call reads on the calling thread: a page, not a walk at the largest limit.
pub const INLINE_STUB_READS: usize = 64;

/// A view of an [`FsStore`] that refuses instead of blocking (see the module docs).
#[derive(Debug)]
pub(crate) struct Inline<'a> {
    fs: &'a FsStore,
    refused: Cell<bool>,
    /// `Some` when the view may write ([`FsStore::inline_write`]): the writes' flush tickets.
    tickets: Option<RefCell<Vec<Ticket>>>,
    /// The view wrote: it must not refuse any more.
    wrote: Cell<bool>,
}

impl FsStore {
    /// Runs `f` against the non-blocking view of this store. `None` when the view refused some
    /// operation: then nothing was written, and the caller must run the work again against the
    /// store itself on a thread that may block.
    pub fn inline<R>(&self, f: impl FnOnce(&dyn Store) -> R) -> Option<R> {
        let view =
            Inline { fs: self, refused: Cell::new(false), tickets: None, wrote: false.into() };
        let result = f(&view);
        (!view.refused.get()).then_some(result)
    }

    /// [`Self::inline`] for a call that may also append (see the module docs), with
    /// `fsync: group` or `never`: `None` when the view refused (nothing was written), else the
    /// result and the flushes its writes wait for.
    pub fn inline_write<R>(&self, f: impl FnOnce(&dyn Store) -> R) -> Option<(R, Flushes)> {
        let view = Inline {
            fs: self,
            refused: Cell::new(false),
            tickets: Some(RefCell::default()),
            wrote: false.into(),
        };
        let result = f(&view);
        if view.refused.get() {
            return None;
        }
        let tickets = view.tickets.map(RefCell::into_inner).unwrap_or_default();
        Some((result, Flushes::new(tickets, Arc::clone(&self.cfg.io))))
    }
}

impl Inline<'_> {
    fn refuse<R>(&self) -> Result<R, StoreError> {
        if self.wrote.get() {
            return Err(StoreError::Internal("the inline view refused after it wrote".into()));
        }
        self.refused.set(true);
        Err(StoreError::WouldBlock)
    }

    /// [`FsStore::with_loaded`] without waiting: a busy slot or a large unloaded log refuses.
    fn with_loaded<R>(
        &self,
        sid: &str,
        f: impl FnOnce(&mut Option<Box<Loaded>>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        if self.refused.get() {
            return self.refuse();
        }
        let slot: Arc<Slot> = self.fs.slot(sid);
        let mut loaded_now = false;
        let result = {
            let mut guard = match slot.inner.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return self.refuse(),
            };
            if slot.flusher.poisoned() {
                return self.refuse(); // the log is cut back first, on a blocking thread
            }
            if guard.is_none() {
                let ctx = self.fs.ctx();
                match std::fs::metadata(ctx.log_path(sid)) {
                    Ok(meta) if meta.len() <= INLINE_LOAD_MAX_BYTES => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    _ => return self.refuse(),
                }
                *guard = Some(self.fs.load(sid, &slot)?);
                loaded_now = true;
            }
            slot.last_used.store(self.fs.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
            f(&mut guard)
        };
        if loaded_now {
            self.fs.evict_if_needed(&slot);
        }
        result
    }

    fn read<R>(&self, sid: &str, f: impl FnOnce(&Loaded) -> R) -> Result<R, StoreError> {
        self.with_loaded(sid, |slot| slot.as_deref().map(f).ok_or_else(not_loaded))
    }

    /// [`FsStore::read_cold`] without waiting: a cold view already open answers what it can;
    /// anything else goes to [`Self::with_loaded`]. Never opens a checkpoint (a file read).
    fn read_cold<R>(
        &self,
        sid: &str,
        cold: impl FnOnce(&ColdView) -> Option<Result<R, StoreError>>,
        hot: impl FnOnce(&Loaded) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        if self.refused.get() {
            return self.refuse();
        }
        let slot = self.fs.slot(sid);
        let answer = match slot.inner.try_lock() {
            Ok(_) if slot.flusher.poisoned() => return self.refuse(),
            Ok(guard) if guard.is_none() => {
                let view = slot.cold.try_lock().ok();
                view.as_deref().and_then(|v| v.as_deref()).and_then(cold)
            }
            Ok(_) => None,
            Err(TryLockError::Poisoned(_)) => None,
            Err(TryLockError::WouldBlock) => return self.refuse(),
        };
        if let Some(answer) = answer {
            slot.last_used.store(self.fs.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
            return answer;
        }
        self.with_loaded(sid, |slot| slot.as_deref().map(hot).ok_or_else(not_loaded)?)
    }
}

impl Store for Inline<'_> {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read_cold(
            session_id,
            |view| Some(Ok(Some(view.meta().clone()))),
            |l| Ok(l.state.meta.clone()),
        )
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.refuse()
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
        self.refuse()
    }

    fn usage(&self, session_id: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        self.read_cold(session_id, |_| None, |l| l.state.usage(session_id, leaf))
    }

    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        match self.refused.get() {
            false => self.fs.catalog.try_page(query).map_or_else(|| self.refuse(), Ok),
            true => self.refuse(),
        }
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
        if query.limit > INLINE_STUB_READS {
            // Possibly many stub reads: a blocking thread (a loaded session without stubs
            // answers from memory below).
            return self.with_loaded(session_id, |slot| match slot.as_deref() {
                Some(l) if !l.spilled.any() => l.state.path_select(session_id, leaf, query),
                _ => self.refuse(),
            });
        }
        let path = self.fs.ctx().log_path(session_id);
        self.read_cold(
            session_id,
            |view| view.select(leaf, query),
            |l| l.path_select(&path, session_id, leaf, query),
        )
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        let path = self.fs.ctx().log_path(session_id);
        self.read_cold(
            session_id,
            |view| Some(view.entry(entry_id)),
            |l| l.spilled.body(&path, &l.state, entry_id),
        )
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.with_loaded(session_id, |slot| match slot.as_ref() {
            Some(l) if l.file_len() <= INLINE_SCAN_MAX_BYTES && !l.spilled.any() => {
                Ok(l.state.entries.values().cloned().collect())
            }
            Some(_) => self.refuse(),
            None => Err(not_loaded()),
        })
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
        _session_id: &str,
        _attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.refuse()
    }

    fn get_attachment_meta(
        &self,
        _session_id: &str,
        _attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        self.refuse()
    }

    fn list_attachments(&self, _session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.refuse()
    }

    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        let path = self.fs.ctx().log_path(session_id);
        self.read(session_id, |l| {
            l.state.feed_page_with(after_seq, limit, |id| l.spilled.body(&path, &l.state, id))
        })?
    }

    /// An append to a cached session whose file is open: one `write` on this thread, the flush
    /// left to the caller ([`FsStore::inline_write`]). Anything else refuses.
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let Some(tickets) = &self.tickets else { return self.refuse() };
        let plain = changes.writes.iter().all(|w| {
            matches!(
                w,
                Write::CommitAppend { .. }
                    | Write::AppendDelta { .. }
                    | Write::PutMeta(_)
                    | Write::PutEntry(_)
                    | Write::SetActiveLeaf(_)
                    | Write::Feed { .. }
            )
        });
        if self.refused.get() || !plain || self.fs.cfg.sync == SyncMode::Always {
            return self.refuse();
        }
        let slot = self.fs.slot(&changes.session_id);
        let mut guard = match slot.inner.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return self.refuse(),
        };
        match guard.as_deref() {
            Some(l) if l.writes_in_place(&changes.writes) && !slot.flusher.poisoned() => {}
            _ => return self.refuse(),
        }
        slot.last_used.store(self.fs.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        self.wrote.set(true);
        let mut tickets = tickets.borrow_mut();
        self.fs.apply_held(&slot, &mut guard, changes, &mut tickets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FsConfig, SyncMode};
    use session_core::conformance::{message_entry, sample_meta};
    use session_core::Write;

    fn open(dir: &std::path::Path) -> FsStore {
        FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("open")
    }

    fn append(sid: &str, id: &str, text: &str) -> ChangeSet {
        let entry = message_entry(id, None, 2, text);
        ChangeSet::new(sid).with(Write::CommitAppend { entry, parent_explicit: false })
    }

    #[test]
    fn serves_cached_reads_and_refuses_what_would_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        let meta = ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)));
        assert!(store.inline(|s| s.apply(&meta)).is_none(), "writes go to a blocking thread");
        assert!(!dir.path().join("s.jsonl").exists(), "a refused write wrote nothing");
        store.apply(&meta).expect("meta");
        store.apply(&append("s", "e1", "hello")).expect("append");
        let got = store.inline(|s| s.get_meta("s")).expect("served").expect("meta");
        assert_eq!(got.expect("some").message_count, 1);
        assert_eq!(store.inline(|s| s.list_entries("s")).expect("served").expect("ok").len(), 1);
        assert!(store.inline(|s| s.get_meta("unknown")).expect("served").expect("ok").is_none());
        // Directory listing and attachment IO always go to a blocking thread.
        assert!(store.inline(|s| s.list_metas()).is_none());
        assert!(store.inline(|s| s.list_attachments("s")).is_none());
        // A slot held by another thread (a writer, a flush, the compactor) refuses.
        let slot = store.slot("s");
        let held = slot.inner.lock().expect("lock");
        assert!(store.inline(|s| s.get_meta("s")).is_none());
        drop(held);
        // A refusal inside a larger piece of work refuses all of it.
        assert!(store.inline(|s| (s.get_meta("s"), s.list_metas()).0).is_none());
        assert!(store.inline(|s| s.get_meta("s")).is_some());
    }

    #[test]
    fn large_cold_logs_are_loaded_on_a_blocking_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
        let text = "x".repeat(2048);
        for i in 0..140 {
            store.apply(&append("s", &format!("e{i}"), &text)).expect("append");
        }
        drop(store);
        let store = open(dir.path());
        assert!(store.inline(|s| s.get_meta("s")).is_none());
        assert!(store.get_meta("s").expect("blocking read").is_some());
        assert!(store.inline(|s| s.get_meta("s")).is_some());
        // Cached but past the scan limit: the full entry list is copied on a blocking thread.
        assert!(store.inline(|s| s.list_entries("s")).is_none());
        assert_eq!(store.list_entries("s").expect("entries").len(), 140);
    }

    /// A large session's page of stubs, and of an open cold view, is served on the calling
    /// thread, the same as the store answers it; a window past `INLINE_STUB_READS` and the
    /// opening of a checkpoint go to a blocking thread.
    #[test]
    fn pages_of_large_sessions_are_served_inline() {
        use session_core::path::PathSelect;
        use session_core::path_index::EntryClasses;
        let dir = tempfile::tempdir().expect("tempdir");
        let open_spilled = || {
            let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
            cfg.spill_above = 0;
            FsStore::open(cfg).expect("open")
        };
        let store = open_spilled();
        store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
        // Past INLINE_LOAD_MAX_BYTES: a cold touch is never replayed on the calling thread.
        let body = "b".repeat(1000);
        for i in 0..100 {
            store.apply(&append("s", &format!("e{i:03}"), &body)).expect("append");
        }
        let page =
            |limit| PathSelect { classes: EntryClasses::ALL, from: 10, backward: false, limit };
        let check = |store: &FsStore| {
            // The compactor's jobs (queued as the log passed 16, 32 and 64 KiB) and the delayed
            // checkpoint take the slot lock, and a view refuses a busy slot: let them run first.
            store.drain_background();
            let leaf = store.get_active_leaf("s").expect("leaf").expect("some");
            let served = store.inline(|s| s.path_select("s", &leaf, &page(20))).expect("inline");
            assert_eq!(served, store.path_select("s", &leaf, &page(20)));
            assert_eq!(served.expect("page")[0].1.message().map(|m| m.content().len()), Some(1));
            let entry = store.inline(|s| s.get_entry("s", "e005")).expect("inline");
            assert_eq!(entry, store.get_entry("s", "e005"));
            assert!(store.inline(|s| s.path_select("s", &leaf, &page(100))).is_none());
        };
        check(&store);
        drop(store);
        let store = open_spilled();
        assert!(store.inline(|s| s.get_meta("s")).is_none(), "opening a checkpoint blocks");
        assert!(store.get_meta("s").expect("cold").is_some());
        check(&store);
        assert_eq!(store.cached_sessions(), 0, "answered from the cold view");
    }

    /// `inline_write` appends to a cached session whose file is open on the calling thread and
    /// hands back its flush; anything else refuses and writes nothing.
    #[test]
    fn appends_to_cached_sessions_are_written_inline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("open");
        let meta = ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)));
        // Not cached with an open file yet: refused, nothing on disk.
        assert!(store.inline_write(|s| s.apply(&meta)).is_none());
        assert!(!dir.path().join("s.jsonl").exists(), "a refused write wrote nothing");
        store.apply(&meta).expect("meta");
        store.apply(&append("s", "e1", "one")).expect("append");
        let (applied, flushes) =
            store.inline_write(|s| s.apply(&append("s", "e2", "two"))).expect("written inline");
        assert!(applied.expect("applied").commit.is_some());
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        runtime.block_on(flushes.wait()).expect("durable");
        let disk = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("reopen");
        assert!(disk.get_entry("s", "e2").expect("read").is_some(), "on disk after its flush");
        // Deletes rewrite the file: never inline.
        let delete = ChangeSet::new("s").with(Write::DeleteMeta);
        assert!(store.inline_write(|s| s.apply(&delete)).is_none());
        // `always` flushes on the writing thread: never inline.
        drop((store, disk));
        let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Always)).expect("open");
        store.apply(&append("s", "e3", "three")).expect("append");
        assert!(store.inline_write(|s| s.apply(&append("s", "e4", "four"))).is_none());
    }
}

//! The non-blocking view of an [`FsStore`]: lets the worker run a call on the engine connection's
//! own thread (no `spawn_blocking` hand-off and back, which costs two thread wake-ups per call)
//! whenever the store can serve it from memory, and tells it to go to a blocking thread otherwise.
//!
//! The view ([`FsStore::inline`]) serves a store operation only when that cannot wait on the disk
//! or on another thread:
//!
//! * the session's slot lock is free (`try_lock`) — a busy slot means another thread is writing,
//!   flushing or loading it;
//! * the session is cached, or its log is missing or small enough to replay on the spot
//!   ([`INLINE_LOAD_MAX_BYTES`]); `list_entries` only for sessions up to
//!   [`INLINE_SCAN_MAX_BYTES`] (an O(n) copy);
//! * writes only in `fsync: never` mode (a durable write waits for `fdatasync`, which belongs on a
//!   blocking thread, under the slot lock, so nobody reads it before it is durable) and only log
//!   appends (no attachment, no delete, no rewrite); a file past its compaction point is queued
//!   for the compaction thread exactly as on the blocking path;
//! * never `list_metas` (may build the catalog from the directory) nor attachments (file IO).
//!
//! Anything else *refuses*: it returns an error and marks the view, and the caller reruns the
//! whole call on a blocking thread against the store itself. A refusal always happens before the
//! call's one write (a `ChangeSet` is applied last, and the view refuses it before planning it),
//! so the rerun starts from the same disk and cache state.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};

use session_core::store::{plan_session_writes_in_place, LogChange};
use session_core::wire::{AttachmentMeta, SessionEntry, SessionMeta};
use session_core::{Applied, ChangeSet, Store, StoreError, Write};

use super::session::{Loaded, Slot};
use super::{FsStore, SyncMode};

/// Largest log replayed on the calling thread when a session is first touched.
pub const INLINE_LOAD_MAX_BYTES: u64 = 64 * 1024;
/// Largest session whose full entry list is copied on the calling thread.
pub const INLINE_SCAN_MAX_BYTES: u64 = 256 * 1024;

/// A view of an [`FsStore`] that refuses instead of blocking (see the module docs).
#[derive(Debug)]
pub(crate) struct Inline<'a> {
    fs: &'a FsStore,
    refused: Cell<bool>,
}

impl FsStore {
    /// Runs `f` against the non-blocking view of this store. `None` when the view refused some
    /// operation: then nothing was written, and the caller must run the work again against the
    /// store itself on a thread that may block.
    pub fn inline<R>(&self, f: impl FnOnce(&dyn Store) -> R) -> Option<R> {
        let view = Inline { fs: self, refused: Cell::new(false) };
        let result = f(&view);
        (!view.refused.get()).then_some(result)
    }
}

impl Inline<'_> {
    fn refuse<R>(&self) -> Result<R, StoreError> {
        self.refused.set(true);
        Err(StoreError::new("fs store: would block (retried on a blocking thread)"))
    }

    /// [`FsStore::with_loaded`] without waiting: a busy slot or a large unloaded log refuses.
    fn with_loaded<R>(
        &self,
        sid: &str,
        f: impl FnOnce(&mut Option<Loaded>) -> Result<R, StoreError>,
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
            if guard.is_none() {
                let ctx = self.fs.ctx();
                match std::fs::metadata(ctx.log_path(sid)) {
                    Ok(meta) if meta.len() <= INLINE_LOAD_MAX_BYTES => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    _ => return self.refuse(),
                }
                *guard = Some(Loaded::load(&ctx, sid)?);
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
        self.with_loaded(sid, |slot| {
            slot.as_ref().map(f).ok_or_else(|| StoreError::new("fs store: session not loaded"))
        })
    }

    /// The append-only part of [`FsStore::apply_locked`], in `never` mode.
    fn apply_locked(
        &self,
        slot: &mut Option<Loaded>,
        changes: &ChangeSet,
    ) -> Result<Applied, StoreError> {
        let sid = changes.session_id.as_str();
        let ctx = self.fs.ctx();
        let loaded =
            slot.as_mut().ok_or_else(|| StoreError::new("fs store: session not loaded"))?;
        let planned = plan_session_writes_in_place(&mut loaded.state, &changes.writes);
        let (log, commit) = match planned {
            Ok(planned) => planned,
            Err(e) => {
                *slot = None; // partly planned: replay the disk on next touch
                return Err(e);
            }
        };
        match &log {
            LogChange::None => {}
            LogChange::Append(records) => {
                if let Err(e) = loaded.append(&ctx, sid, records) {
                    *slot = None;
                    return Err(e);
                }
                self.fs.catalog.on_write(sid, loaded.state.meta.as_ref());
            }
            LogChange::Rewrite => {
                // Not produced by log-only writes; planned in place, so replay the disk.
                *slot = None;
                return self.refuse();
            }
        }
        Ok(Applied { commit, attachments_deleted: Vec::new() })
    }
}

fn log_only(write: &Write) -> bool {
    matches!(
        write,
        Write::PutMeta(_)
            | Write::PutEntry(_)
            | Write::SetActiveLeaf(_)
            | Write::CommitAppend { .. }
    )
}

impl Store for Inline<'_> {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(session_id, |l| l.state.meta.clone())
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.refuse()
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        self.read(session_id, |l| l.state.entries.get(entry_id).cloned())
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.with_loaded(session_id, |slot| match slot.as_ref() {
            Some(l) if l.file_len() <= INLINE_SCAN_MAX_BYTES => {
                Ok(l.state.entries.values().cloned().collect())
            }
            Some(_) => self.refuse(),
            None => Err(StoreError::new("fs store: session not loaded")),
        })
    }

    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        self.read(session_id, |l| l.state.leaf.clone())
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

    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        if self.fs.cfg.sync != SyncMode::Never || !changes.writes.iter().all(log_only) {
            return self.refuse();
        }
        let sid = &changes.session_id;
        let mut compact = false;
        let applied = self.with_loaded(sid, |slot| {
            let applied = self.apply_locked(slot, changes);
            compact = slot.as_mut().is_some_and(Loaded::wants_compaction);
            applied
        })?;
        if compact {
            // Queued like the blocking path does: the compaction thread does the work.
            self.fs.compactor.submit(sid, self.fs.slot(sid));
        }
        Ok(applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::FsConfig;
    use session_core::conformance::{message_entry, sample_meta};

    fn open(dir: &std::path::Path, sync: SyncMode) -> FsStore {
        FsStore::open(FsConfig::new(dir).sync(sync)).expect("open")
    }

    fn put_meta(sid: &str) -> ChangeSet {
        ChangeSet::new(sid).with(Write::PutMeta(sample_meta(sid, 1)))
    }

    fn append(sid: &str, id: &str) -> ChangeSet {
        let entry = message_entry(id, None, 2, "hello");
        ChangeSet::new(sid).with(Write::CommitAppend { entry, parent_explicit: false })
    }

    #[test]
    fn serves_from_memory_and_refuses_what_would_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path(), SyncMode::Never);
        assert!(store.inline(|s| s.apply(&put_meta("s"))).expect("served").is_ok());
        assert!(store.inline(|s| s.apply(&append("s", "e1"))).expect("served").is_ok());
        let meta = store.inline(|s| s.get_meta("s")).expect("served").expect("meta");
        assert_eq!(meta.expect("some").message_count, 1);
        assert_eq!(store.inline(|s| s.list_entries("s")).expect("served").expect("ok").len(), 1);
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
    fn durable_writes_and_large_cold_logs_go_to_a_blocking_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path(), SyncMode::Group);
        assert!(store.inline(|s| s.apply(&put_meta("s"))).is_none());
        assert!(!dir.path().join("s.jsonl").exists(), "a refused write wrote nothing");
        store.apply(&put_meta("s")).expect("blocking write");
        assert!(store.inline(|s| s.get_meta("s")).expect("served").expect("ok").is_some());
        drop(store);

        // A cold log above the inline replay limit is loaded by the blocking path first.
        let store = open(dir.path(), SyncMode::Never);
        let text = "x".repeat(2048);
        for i in 0..40 {
            let entry = message_entry(&format!("e{i}"), None, i, &text);
            let changes =
                ChangeSet::new("s").with(Write::CommitAppend { entry, parent_explicit: false });
            store.apply(&changes).expect("append");
        }
        drop(store);
        let store = open(dir.path(), SyncMode::Never);
        assert!(store.inline(|s| s.get_meta("s")).is_none());
        assert!(store.get_meta("s").expect("blocking read").is_some());
        assert!(store.inline(|s| s.get_meta("s")).is_some());
        assert!(store.inline(|s| s.list_entries("s")).expect("served").expect("ok").len() == 40);
    }

    #[test]
    fn inline_appends_replay_after_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path(), SyncMode::Never);
        store.inline(|s| s.apply(&put_meta("s"))).expect("served").expect("ok");
        let mut served = 0;
        for i in 0..200 {
            let changes = append("s", &format!("e{i}"));
            // Past the compaction point appends still land inline (the compactor is queued); only
            // while the compactor holds the session's slot does one go the blocking way.
            match store.inline(|s| s.apply(&changes)) {
                Some(result) => {
                    result.expect("ok");
                    served += 1;
                }
                None => {
                    store.apply(&changes).expect("blocking");
                }
            }
        }
        assert!(served > 150, "{served}");
        drop(store);
        let store = open(dir.path(), SyncMode::Never);
        let entries = store.list_entries("s").expect("entries");
        assert_eq!(entries.len(), 200);
        assert_eq!(store.get_meta("s").expect("meta").expect("some").message_count, 200);
    }
}

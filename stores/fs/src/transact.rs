//! One call, one transaction on the fs store: the session's slot lock is taken once, the core
//! decides over the session as that lock holds it ([`SlotView`]: the replayed state, stub bodies
//! read from the log, attachment files), and the change set is applied before the lock goes; its
//! group flush is waited for after, as [`session_core::Store::apply`] does. Whatever else runs in
//! this process — another call, a compaction, a flush — waits on the same lock, so nothing
//! changes the session between the decision and its write.

use std::path::Path;

use session_core::store::{own_change_set, Decide, SessionView, WHOLE_PATH};
use session_core::wire::{AttachmentMeta, SessionEntry, SessionMeta};
use session_core::{Applied, SessionError, StoreError};

use super::session::Loaded;
use super::{not_loaded, FsStore};

impl FsStore {
    /// [`session_core::Store::transact`] of the fs store: a storage failure (outer) or what the
    /// decision answered (inner).
    pub(super) fn transact_in_slot(
        &self,
        sid: &str,
        decide: Decide<'_>,
    ) -> Result<Result<Option<Applied>, SessionError>, StoreError> {
        let slot = self.slot(sid);
        let mut tickets = Vec::new();
        let decided = self.with_loaded(sid, |guard| {
            let loaded = guard.as_deref().ok_or_else(not_loaded)?;
            let path = self.ctx().log_path(sid);
            let view = SlotView { fs: self, sid, loaded, path: &path };
            match own_change_set(sid, decide(&view)) {
                Ok(changes) => self.apply_held(&slot, guard, &changes, &mut tickets).map(Ok),
                Err(not_here) => Ok(Err(not_here)),
            }
        })?;
        let applied = match decided {
            Ok(applied) => applied,
            Err(not_here) => return not_here.finish(self),
        };
        for ticket in &tickets {
            if let Err(e) = ticket.wait(&*self.cfg.io) {
                self.clean_failed_flushes();
                return Err(e);
            }
        }
        Ok(Ok(Some(applied)))
    }
}

/// A session as its slot lock holds it.
struct SlotView<'a> {
    fs: &'a FsStore,
    sid: &'a str,
    loaded: &'a Loaded,
    path: &'a Path,
}

impl SessionView for SlotView<'_> {
    fn session_id(&self) -> &str {
        self.sid
    }
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError> {
        Ok(self.loaded.state.meta.clone())
    }
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.loaded.spilled.body(self.path, &self.loaded.state, entry_id)
    }
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError> {
        let mut entries: Vec<SessionEntry> = self.loaded.state.entries.values().cloned().collect();
        self.loaded.spilled.fill(self.path, &mut entries)?;
        Ok(entries)
    }
    fn active_leaf(&self) -> Result<Option<String>, StoreError> {
        Ok(self.loaded.state.leaf.clone())
    }
    fn lifecycle(&self) -> Result<session_core::lifecycle::Lifecycle, StoreError> {
        Ok(self.loaded.state.lifecycle.clone())
    }
    fn attachment(&self, id: &str) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.fs.attachments.get(self.sid, id)
    }
    fn attachment_meta(&self, id: &str) -> Result<Option<AttachmentMeta>, StoreError> {
        self.fs.attachments.get_meta(self.sid, id)
    }
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let path = self.loaded.path_select(self.path, self.sid, leaf, &WHOLE_PATH)?;
        Ok(path.into_iter().map(|(_, entry)| entry).collect())
    }
}

//! One transaction per call: what a mutation may read while it decides ([`SessionView`]: one
//! session as its backend holds it locked) and the two views every backend builds on —
//! [`StoreView`] (a store's own reads, for backends whose lock the host already holds) and
//! [`StateView`] (a replayed [`SessionState`] held under the backend's lock).
//!
//! A mutation is load → decide → apply → publish: [`Store::transact`] opens the backend's
//! transaction on one session under the backend's own lock, hands the core's decision a view of
//! it, and applies the change set the decision returns in the same transaction. The decision
//! gets a `&dyn SessionView`, never a store: it cannot apply anything, read another session or
//! read outside the transaction, so no decision is taken on state another writer can change
//! before the apply.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{SessionError, StoreError};
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::record::SessionState;
use crate::store::{Applied, ChangeSet, Store};
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};

/// One session as a mutation sees it while it decides, inside its backend's transaction.
pub trait SessionView {
    /// The session the transaction holds.
    fn session_id(&self) -> &str;
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError>;
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError>;
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError>;
    fn active_leaf(&self) -> Result<Option<String>, StoreError>;
    fn attachment(
        &self,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError>;
    fn attachment_meta(&self, attachment_id: &str) -> Result<Option<AttachmentMeta>, StoreError>;
    /// The path root → `leaf`, oldest first; a broken chain is a storage error. By default
    /// walked one [`SessionView::entry`] at a time.
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        walk_parents(self.session_id(), leaf, |id| self.entry(id))
    }
}

/// What a mutation decided inside a transaction: the change set to apply in it, if any.
pub type Decision = Result<Option<ChangeSet>, SessionError>;

/// The decision a backend runs inside its transaction ([`Store::transact`]).
pub type Decide<'a> = &'a mut dyn FnMut(&dyn SessionView) -> Decision;

/// [`Store::transact`] for a backend whose session lock the caller holds (the worker's per-session
/// lock over the fs store, a single-threaded host): decide over the store's own reads of the
/// session, then apply.
pub fn transact_under_callers_lock<S: Store + ?Sized>(
    store: &S,
    session_id: &str,
    decide: Decide<'_>,
) -> Result<Option<Applied>, SessionError> {
    let changes = decide(&StoreView { store, session_id })?;
    match changes {
        Some(changes) => Ok(Some(store.apply(&changes)?)),
        None => Ok(None),
    }
}

/// A store's reads of one session as a [`SessionView`].
#[derive(Debug)]
pub struct StoreView<'a, S: Store + ?Sized> {
    pub store: &'a S,
    pub session_id: &'a str,
}

impl<S: Store + ?Sized> SessionView for StoreView<'_, S> {
    fn session_id(&self) -> &str {
        self.session_id
    }
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError> {
        self.store.get_meta(self.session_id)
    }
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.store.get_entry(self.session_id, entry_id)
    }
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError> {
        self.store.list_entries(self.session_id)
    }
    fn active_leaf(&self) -> Result<Option<String>, StoreError> {
        self.store.get_active_leaf(self.session_id)
    }
    fn attachment(&self, id: &str) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.store.get_attachment(self.session_id, id)
    }
    fn attachment_meta(&self, id: &str) -> Result<Option<AttachmentMeta>, StoreError> {
        self.store.get_attachment_meta(self.session_id, id)
    }
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let whole =
            PathSelect { classes: EntryClasses::ALL, from: 0, backward: false, limit: usize::MAX };
        let path = self.store.path_select(self.session_id, leaf, &whole)?;
        Ok(path.into_iter().map(|(_, entry)| entry).collect())
    }
}

/// A replayed session held under its backend's lock, as a [`SessionView`]; its attachments come
/// from `attachments` (a backend keeps them apart from the log).
pub struct StateView<'a> {
    pub session_id: &'a str,
    pub state: &'a SessionState,
    /// The attachment `id` of the session, with its bytes when asked for (`true`).
    pub attachments: &'a dyn Fn(&str, bool) -> Result<FoundAttachment, StoreError>,
}

/// An attachment a [`StateView`]'s backend found: its meta, and its bytes when they were asked for.
pub type FoundAttachment = Option<(AttachmentMeta, Option<Vec<u8>>)>;

impl core::fmt::Debug for StateView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StateView").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

impl SessionView for StateView<'_> {
    fn session_id(&self) -> &str {
        self.session_id
    }
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError> {
        Ok(self.state.meta.clone())
    }
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError> {
        Ok(self.state.entries.get(entry_id).cloned())
    }
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError> {
        Ok(self.state.entries.values().cloned().collect())
    }
    fn active_leaf(&self) -> Result<Option<String>, StoreError> {
        Ok(self.state.leaf.clone())
    }
    fn attachment(&self, id: &str) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        Ok((self.attachments)(id, true)?.map(|(meta, bytes)| (meta, bytes.unwrap_or_default())))
    }
    fn attachment_meta(&self, id: &str) -> Result<Option<AttachmentMeta>, StoreError> {
        Ok((self.attachments)(id, false)?.map(|(meta, _)| meta))
    }
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let whole =
            PathSelect { classes: EntryClasses::ALL, from: 0, backward: false, limit: usize::MAX };
        let path = self.state.path_select(self.session_id, leaf, &whole)?;
        Ok(path.into_iter().map(|(_, entry)| entry).collect())
    }
}

/// The path root → `leaf`, oldest first, walked one `get` per step; a dangling parent or a cycle
/// is a storage error naming `session_id`.
pub fn walk_parents(
    session_id: &str,
    leaf: &str,
    mut get: impl FnMut(&str) -> Result<Option<SessionEntry>, StoreError>,
) -> Result<Vec<SessionEntry>, StoreError> {
    let mut path = Vec::new();
    let mut seen = BTreeSet::new();
    let mut next = Some(String::from(leaf));
    while let Some(id) = next.take() {
        let broken = |what: String| {
            StoreError::Corrupt(format!("broken parent chain in session {session_id}: {what}"))
        };
        if !seen.insert(id.clone()) {
            return Err(broken(format!("cycle at entry {id}")));
        }
        let entry = get(&id)?.ok_or_else(|| broken(format!("entry {id} is missing")))?;
        next = entry.parent_id().map(String::from);
        path.push(entry);
    }
    path.reverse();
    Ok(path)
}

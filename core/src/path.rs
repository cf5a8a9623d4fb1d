//! Walking a session's entry tree: the parent chain from a leaf to the root (the only order there
//! is, invariant 1), with dangling parents and cycles reported as storage errors.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Result, SessionError};
use crate::store::Store;
use crate::wire::SessionEntry;

/// A lazy walk from a leaf towards the root, newest first, one `get_entry` per step.
pub struct BackWalk<'a> {
    store: &'a dyn Store,
    session_id: &'a str,
    next: Option<String>,
    seen: BTreeSet<String>,
}

impl core::fmt::Debug for BackWalk<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BackWalk")
            .field("session_id", &self.session_id)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a> BackWalk<'a> {
    pub fn new(store: &'a dyn Store, session_id: &'a str, leaf: &str) -> Self {
        BackWalk { store, session_id, next: Some(String::from(leaf)), seen: BTreeSet::new() }
    }

    /// The next older entry, `None` past the root.
    pub fn step(&mut self) -> Result<Option<SessionEntry>> {
        let Some(id) = self.next.take() else { return Ok(None) };
        let sid = self.session_id;
        if !self.seen.insert(id.clone()) {
            return Err(SessionError::storage(format!(
                "broken parent chain in session {sid}: cycle at entry {id}"
            )));
        }
        let entry = self.store.get_entry(sid, &id)?.ok_or_else(|| {
            SessionError::storage(format!(
                "broken parent chain in session {sid}: entry {id} is missing"
            ))
        })?;
        self.next = entry.parent_id().map(String::from);
        Ok(Some(entry))
    }
}

/// The path root → `leaf`, oldest first.
pub fn path_to(store: &dyn Store, session_id: &str, leaf: &str) -> Result<Vec<SessionEntry>> {
    let mut walk = BackWalk::new(store, session_id, leaf);
    let mut path = Vec::new();
    while let Some(entry) = walk.step()? {
        path.push(entry);
    }
    path.reverse();
    Ok(path)
}

/// The active path (root → active leaf), empty when the session has no leaf.
pub fn active_path(store: &dyn Store, session_id: &str) -> Result<Vec<SessionEntry>> {
    match store.get_active_leaf(session_id)? {
        Some(leaf) => path_to(store, session_id, &leaf),
        None => Ok(Vec::new()),
    }
}

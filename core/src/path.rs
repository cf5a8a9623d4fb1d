//! Walking a session's entry tree: the parent chain from a leaf to the root (the only order there
//! is, invariant 1), with dangling parents and cycles reported as storage errors.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Result, SessionError};
use crate::store::Store;
use crate::wire::SessionEntry;

/// Walks from `leaf` towards the root, newest first, one `get_entry` per step, calling `visit`
/// until it returns `false` or the root is passed.
pub fn walk_back(
    store: &dyn Store,
    session_id: &str,
    leaf: &str,
    visit: &mut dyn FnMut(SessionEntry) -> bool,
) -> Result<()> {
    let mut seen = BTreeSet::new();
    let mut next: Option<String> = Some(String::from(leaf));
    while let Some(id) = next {
        if !seen.insert(id.clone()) {
            return Err(SessionError::storage(format!(
                "broken parent chain in session {session_id}: cycle at entry {id}"
            )));
        }
        let entry = store.get_entry(session_id, &id)?.ok_or_else(|| {
            SessionError::storage(format!(
                "broken parent chain in session {session_id}: entry {id} is missing"
            ))
        })?;
        next = entry.parent_id().map(String::from);
        if !visit(entry) {
            break;
        }
    }
    Ok(())
}

/// The path root → `leaf`, oldest first.
pub fn path_to(store: &dyn Store, session_id: &str, leaf: &str) -> Result<Vec<SessionEntry>> {
    let mut path = Vec::new();
    walk_back(store, session_id, leaf, &mut |e| {
        path.push(e);
        true
    })?;
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

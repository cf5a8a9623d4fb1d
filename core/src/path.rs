//! Reading a path of a session's entry tree, root → leaf (the parent chain is the only order
//! there is, invariant 1): the two indexed questions every message read asks of a store
//! ([`PathSpot`], [`PathSelect`]), answered from a [`SessionState`]'s path index by the stores that
//! hold one, and by walking the chain one `get_entry` at a time otherwise — the walk is also the
//! test oracle of the index. Dangling parents and cycles are storage errors either way.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Result, StoreError};
use crate::path_index::{EntryClass, EntryClasses};
use crate::record::SessionState;
use crate::wire::SessionEntry;

/// Where an entry is on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSpot {
    /// Entries on the path.
    pub len: usize,
    /// Position (0 = root) and class of the entry asked about; `None` when it is not on the path.
    pub at: Option<(usize, EntryClass)>,
}

/// A window of a path: the first `limit` entries of `classes` at positions `from` and later, or
/// with `backward` the last `limit` before `from`; answered in path order, each with its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSelect {
    pub classes: EntryClasses,
    pub from: usize,
    pub backward: bool,
    pub limit: usize,
}

/// The path root → `leaf`, oldest first, walked one `get` (an entry of the session by id) per
/// step; a dangling parent or a cycle is a storage error naming `session_id`.
pub fn walk(
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

/// [`Store::path_locate`](crate::store::Store::path_locate) by walking the path ([`walk`]).
pub fn walked_locate(
    session_id: &str,
    leaf: &str,
    entry_id: Option<&str>,
    get: impl FnMut(&str) -> Result<Option<SessionEntry>, StoreError>,
) -> Result<PathSpot, StoreError> {
    let path = walk(session_id, leaf, get)?;
    let at = entry_id.and_then(|id| {
        let at = path.iter().position(|e| e.id() == id)?;
        Some((at, EntryClass::of(&path[at])))
    });
    Ok(PathSpot { len: path.len(), at })
}

/// [`Store::path_select`](crate::store::Store::path_select) by walking the path ([`walk`]).
pub fn walked_select(
    session_id: &str,
    leaf: &str,
    query: &PathSelect,
    get: impl FnMut(&str) -> Result<Option<SessionEntry>, StoreError>,
) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
    let path = walk(session_id, leaf, get)?;
    let keep = |(_, e): &(usize, SessionEntry)| query.classes.contains(EntryClass::of(e));
    let mut found: Vec<(usize, SessionEntry)> = if query.backward {
        let end = query.from.min(path.len());
        let mut older: Vec<_> =
            path.into_iter().enumerate().take(end).rev().filter(keep).take(query.limit).collect();
        older.reverse();
        older
    } else {
        path.into_iter().enumerate().skip(query.from).filter(keep).take(query.limit).collect()
    };
    found.shrink_to_fit();
    Ok(found)
}

impl SessionState {
    /// [`Store::path_locate`](crate::store::Store::path_locate) from this state's path index (`session_id` names it in errors).
    pub fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        let view = self.path_index().view(leaf, &self.entries).map_err(|b| b.error(session_id))?;
        Ok(PathSpot { len: view.len(), at: entry_id.and_then(|id| view.locate(id)) })
    }

    /// [`Store::path_select`](crate::store::Store::path_select) from this state's path index.
    pub fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        let view = self.path_index().view(leaf, &self.entries).map_err(|b| b.error(session_id))?;
        let positions = view.select(query.classes, query.from, query.backward, query.limit);
        let mut found = Vec::with_capacity(positions.len());
        for at in positions {
            let entry = view.id_at(at).and_then(|id| self.entries.get(id));
            let entry = entry.ok_or_else(|| {
                StoreError::Internal(format!("path index of {session_id}: no entry at {at}"))
            })?;
            found.push((at, entry.clone()));
        }
        Ok(found)
    }
}

//! Reading a path of a session's entry tree, root → leaf (the parent chain is the only order
//! there is, invariant 1): the two indexed questions every message read asks of a store
//! ([`PathSpot`], [`PathSelect`]), answered from a [`SessionState`]'s path index by the stores that
//! hold one, and by walking the chain one `get_entry` at a time otherwise — the walk is also the
//! test oracle of the index. Dangling parents and cycles are storage errors either way.

use alloc::vec::Vec;

use crate::error::{Result, StoreError};
use crate::path_index::{EntryClass, EntryClasses};
use crate::record::SessionState;
use crate::store::Store;
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

/// The path root → `leaf`, oldest first, walked one `get_entry` per step.
pub fn walk<S: Store + ?Sized>(
    store: &S,
    session_id: &str,
    leaf: &str,
) -> Result<Vec<SessionEntry>, StoreError> {
    crate::transaction::walk_parents(session_id, leaf, |id| store.get_entry(session_id, id))
}

/// [`Store::path_locate`] by walking the path.
pub fn walked_locate<S: Store + ?Sized>(
    store: &S,
    session_id: &str,
    leaf: &str,
    entry_id: Option<&str>,
) -> Result<PathSpot, StoreError> {
    let path = walk(store, session_id, leaf)?;
    let at = entry_id.and_then(|id| {
        let at = path.iter().position(|e| e.id() == id)?;
        Some((at, EntryClass::of(&path[at])))
    });
    Ok(PathSpot { len: path.len(), at })
}

/// [`Store::path_select`] by walking the path.
pub fn walked_select<S: Store + ?Sized>(
    store: &S,
    session_id: &str,
    leaf: &str,
    query: &PathSelect,
) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
    let path = walk(store, session_id, leaf)?;
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
    /// [`Store::path_locate`] from this state's path index (`session_id` names it in errors).
    pub fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        let view = self.path_index().view(leaf, &self.entries).map_err(|b| b.error(session_id))?;
        Ok(PathSpot { len: view.len(), at: entry_id.and_then(|id| view.locate(id)) })
    }

    /// [`Store::path_select`] from this state's path index.
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

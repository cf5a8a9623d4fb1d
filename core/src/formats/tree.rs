//! The entry tree a format file holds: put in an order this store can apply (parents first),
//! checked (unique ids, parents present, no cycle), walked root → leaf for the formats that
//! hold one branch, and put oldest first (the order pi and Claude Code append in).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::vec::Vec;

use super::FormatError;
use crate::wire::SessionEntry;

/// `entries` with every parent before its children, otherwise in the order given; an error when
/// an id is empty or repeated, a parent is missing or the parents make a cycle.
pub fn parents_first(entries: Vec<SessionEntry>) -> Result<Vec<SessionEntry>, FormatError> {
    let mut ids = BTreeSet::new();
    for entry in &entries {
        if entry.id().is_empty() {
            return Err(FormatError::whole("an entry has an empty id"));
        }
        if !ids.insert(entry.id()) {
            return Err(FormatError::whole(format!("entry id {:?} is used twice", entry.id())));
        }
    }
    for entry in &entries {
        if let Some(parent) = entry.parent_id() {
            if !ids.contains(parent) {
                return Err(FormatError::whole(format!(
                    "entry {:?}: its parent {parent:?} is not in the file",
                    entry.id()
                )));
            }
        }
    }
    // Children by parent, in file order; roots first, then depth-first in file order.
    let mut children: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut order = Vec::with_capacity(entries.len());
    let mut stack = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.parent_id() {
            Some(parent) => children.entry(parent).or_default().push(i),
            None => order.push(i),
        }
    }
    let roots = core::mem::take(&mut order);
    stack.extend(roots.into_iter().rev());
    while let Some(i) = stack.pop() {
        order.push(i);
        if let Some(kids) = children.get(entries[i].id()) {
            stack.extend(kids.iter().rev());
        }
    }
    if order.len() != entries.len() {
        let placed: BTreeSet<usize> = order.iter().copied().collect();
        let stuck = (0..entries.len()).find(|i| !placed.contains(i)).unwrap_or(0);
        return Err(FormatError::whole(format!(
            "entry {:?} is in a cycle of parents",
            entries[stuck].id()
        )));
    }
    let mut slots: Vec<Option<SessionEntry>> = entries.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The entries root → `leaf` (empty when `leaf` is `None` or not found; a broken chain stops).
pub fn branch<'a>(entries: &'a [SessionEntry], leaf: Option<&str>) -> Vec<&'a SessionEntry> {
    let by_id: BTreeMap<&str, &SessionEntry> = entries.iter().map(|e| (e.id(), e)).collect();
    let mut path = Vec::new();
    let mut at = leaf.and_then(|id| by_id.get(id).copied());
    while let Some(entry) = at {
        if path.len() > entries.len() {
            break;
        }
        path.push(entry);
        at = entry.parent_id().and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    path
}

/// `entries` with every parent before its children, otherwise by time (then as given): pi and
/// Claude Code append in time order, so a file they wrote comes back in its own order. Entries in a cycle of
/// parents come last, as given.
pub fn oldest_first(entries: &[SessionEntry]) -> Vec<&SessionEntry> {
    let index: BTreeMap<&str, usize> =
        entries.iter().enumerate().map(|(i, e)| (e.id(), i)).collect();
    let mut children: Vec<Vec<usize>> = alloc::vec![Vec::new(); entries.len()];
    let mut ready = BTreeSet::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.parent_id().and_then(|p| index.get(p)) {
            Some(&parent) if parent != i => children[parent].push(i),
            _ => {
                ready.insert((entry.timestamp(), i));
            }
        }
    }
    let mut placed = alloc::vec![false; entries.len()];
    let mut order = Vec::with_capacity(entries.len());
    while let Some((_, i)) = ready.pop_first() {
        placed[i] = true;
        order.push(&entries[i]);
        ready.extend(children[i].iter().map(|&child| (entries[child].timestamp(), child)));
    }
    order.extend(entries.iter().zip(&placed).filter(|(_, placed)| !**placed).map(|(e, _)| e));
    order
}

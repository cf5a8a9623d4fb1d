//! The active path as positions, kept current by [`crate::record::SessionState::apply`]: what
//! lets a read of one page of a path cost that page, not the session (issue 12).
//!
//! The index holds the ids of the path root → active leaf in order, each id's position, and, for
//! each [`EntryClass`], the positions of its entries in order, so "the next `limit` entries of
//! these classes after position p" is a binary search and a merge. An append that extends the
//! active path pushes one id; moving the leaf (set-active-leaf, a branching append) walks back from
//! the new leaf only to where it meets the old path and cuts what lies past it. A path whose
//! parent chain is broken (a dangling parent, a cycle) is kept as the reason instead, so reads fail
//! exactly as a walk of the chain does.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::StoreError;
use crate::wire::{Role, SearchKind, SessionEntry};

/// What a read filters entries by: a custom (non-message) entry, or a message of one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EntryClass {
    CustomEntry = 0,
    User = 1,
    Assistant = 2,
    FunctionResult = 3,
    CustomMessage = 4,
}

const CLASSES: usize = 5;

impl EntryClass {
    pub fn of(entry: &SessionEntry) -> EntryClass {
        match entry.message().map(|m| m.role()) {
            None => EntryClass::CustomEntry,
            Some(role) => EntryClass::of_role(role),
        }
    }

    /// Every class, in discriminant order.
    pub const EVERY: [EntryClass; CLASSES] = [
        EntryClass::CustomEntry,
        EntryClass::User,
        EntryClass::Assistant,
        EntryClass::FunctionResult,
        EntryClass::CustomMessage,
    ];

    /// The class whose discriminant is `n` (stores that persist classes).
    pub fn from_index(n: u8) -> Option<EntryClass> {
        EntryClass::EVERY.get(usize::from(n)).copied()
    }

    /// What `session::search` calls an entry of this class: a custom entry, or a message of
    /// its role.
    pub fn search_kind(self) -> (SearchKind, Option<Role>) {
        match self {
            EntryClass::CustomEntry => (SearchKind::Custom, None),
            EntryClass::User => (SearchKind::Message, Some(Role::User)),
            EntryClass::Assistant => (SearchKind::Message, Some(Role::Assistant)),
            EntryClass::FunctionResult => (SearchKind::Message, Some(Role::FunctionResult)),
            EntryClass::CustomMessage => (SearchKind::Message, Some(Role::Custom)),
        }
    }

    fn of_role(role: Role) -> EntryClass {
        match role {
            Role::User => EntryClass::User,
            Role::Assistant => EntryClass::Assistant,
            Role::FunctionResult => EntryClass::FunctionResult,
            Role::Custom => EntryClass::CustomMessage,
        }
    }
}

/// A set of [`EntryClass`]es.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryClasses(u8);

impl EntryClasses {
    /// Every entry.
    pub const ALL: EntryClasses = EntryClasses((1 << CLASSES) - 1);
    /// Every message entry (no custom entries).
    pub const MESSAGES: EntryClasses = EntryClasses(Self::ALL.0 & !1);

    /// What `session::messages` returns: messages of `roles` (every role when `None`), and custom
    /// entries only with `include_custom` and no role filter (contract §2.13).
    pub fn for_messages(roles: Option<&[Role]>, include_custom: bool) -> EntryClasses {
        match roles {
            Some(roles) => EntryClasses(
                roles.iter().fold(0, |set, &role| set | 1 << EntryClass::of_role(role) as u8),
            ),
            None if include_custom => EntryClasses::ALL,
            None => EntryClasses::MESSAGES,
        }
    }

    /// The set of `classes`.
    pub fn of(classes: &[EntryClass]) -> EntryClasses {
        EntryClasses(classes.iter().fold(0, |set, &class| set | 1 << class as u8))
    }

    pub fn contains(self, class: EntryClass) -> bool {
        self.0 & (1 << class as u8) != 0
    }

    /// The classes of the set, in discriminant order.
    pub fn classes(self) -> impl Iterator<Item = EntryClass> {
        (0..CLASSES as u8).filter_map(EntryClass::from_index).filter(move |&c| self.contains(c))
    }

    fn members(self) -> impl Iterator<Item = usize> {
        (0..CLASSES).filter(move |c| self.0 & (1 << c) != 0)
    }
}

/// Why the chain from a leaf cannot be walked to its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// The chain names an entry the session does not hold.
    Missing(String),
    /// The chain comes back to this entry.
    Cycle(String),
}

impl Broken {
    /// The storage error a read of the path fails with (the text a walk of the chain gives).
    pub fn error(&self, session_id: &str) -> StoreError {
        StoreError::Corrupt(match self {
            Broken::Missing(id) => {
                alloc::format!("broken parent chain in session {session_id}: entry {id} is missing")
            }
            Broken::Cycle(id) => {
                alloc::format!("broken parent chain in session {session_id}: cycle at entry {id}")
            }
        })
    }
}

/// The active path of one session as positions (see the module docs). Equal to the index
/// [`PathIndex::build`] makes from scratch after any sequence of updates (what the model tests
/// check).
#[derive(Debug, Clone, Default)]
pub struct PathIndex {
    ids: Vec<String>,
    classes: Vec<EntryClass>,
    /// Where each id was last put on the path; stale for ids cut since (checked against `ids`
    /// on lookup, so a cut removes nothing: bounded by the session's entries). `u64` and no
    /// removals: the map code the simulation already has, none more in the wasm bundle.
    positions: BTreeMap<String, u64>,
    by_class: [Vec<usize>; CLASSES],
    broken: Option<Broken>,
    /// The shortest the path was cut to since [`PathIndex::take_unchanged`] last asked: the
    /// positions below it are as they were then (0 for a new index).
    unchanged: usize,
}

/// Equal when they index the same path the same way (stale `positions` of cut ids aside).
impl PartialEq for PathIndex {
    fn eq(&self, other: &Self) -> bool {
        let positioned = |index: &PathIndex| {
            index.ids.iter().enumerate().all(|(at, id)| index.position(id) == Some(at))
        };
        self.ids == other.ids
            && self.classes == other.classes
            && self.by_class == other.by_class
            && self.broken == other.broken
            && positioned(self)
            && positioned(other)
    }
}

/// Walking back from a leaf to a path: where it met it and the entries before that.
struct Walked<'a> {
    /// Position on the path of the first entry met that is on it (`None`: past the root).
    junction: Option<usize>,
    /// The entries walked, leaf first.
    suffix: Vec<(&'a str, EntryClass)>,
}

impl PathIndex {
    /// The index of the path to `leaf` over `entries`.
    pub fn build(leaf: Option<&str>, entries: &BTreeMap<String, SessionEntry>) -> PathIndex {
        let mut index = PathIndex::default();
        index.follow(leaf, entries);
        index
    }

    /// Why the path cannot be walked, if it cannot.
    pub fn broken(&self) -> Option<&Broken> {
        self.broken.as_ref()
    }

    /// Number of entries on the path.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Position of `id` on the path.
    pub fn position(&self, id: &str) -> Option<usize> {
        let at = *self.positions.get(id)? as usize;
        (self.ids.get(at).map(String::as_str) == Some(id)).then_some(at)
    }

    /// The id at `position`.
    pub fn id_at(&self, position: usize) -> Option<&str> {
        self.ids.get(position).map(String::as_str)
    }

    fn clear(&mut self) {
        self.truncate(0);
        self.broken = None;
    }

    fn truncate(&mut self, len: usize) {
        {
            self.unchanged = self.unchanged.min(len);
        }
        self.ids.truncate(len);
        if len == 0 {
            self.positions.clear();
        }
        self.classes.truncate(len);
        for list in &mut self.by_class {
            while list.last().is_some_and(|&p| p >= len) {
                list.pop();
            }
        }
    }

    /// How many positions of the path are as they were at the last call (all of them for a
    /// new index: 0); from now on, all of them.
    pub fn take_unchanged(&mut self) -> usize {
        core::mem::replace(&mut self.unchanged, self.ids.len())
    }

    /// The positions of `class` at `from` and after, in path order.
    pub fn positions_of(&self, class: EntryClass, from: usize) -> impl Iterator<Item = usize> + '_ {
        let list = &self.by_class[class as usize];
        list[list.partition_point(|&p| p < from)..].iter().copied()
    }

    /// Adds `id` at the end of the path.
    pub fn push(&mut self, id: &str, class: EntryClass) {
        let at = self.ids.len();
        self.ids.push(String::from(id));
        self.classes.push(class);
        self.positions.insert(String::from(id), at as u64);
        self.by_class[class as usize].push(at);
    }

    /// Walks from `leaf` back to this path (or past the root).
    fn walk<'a>(
        &self,
        leaf: &'a str,
        entries: &'a BTreeMap<String, SessionEntry>,
    ) -> Result<Walked<'a>, Broken> {
        let mut suffix = Vec::new();
        let mut seen = BTreeSet::new();
        let mut next = Some(leaf);
        let junction = loop {
            let Some(id) = next else { break None };
            if let Some(at) = self.position(id) {
                break Some(at);
            }
            if !seen.insert(String::from(id)) {
                return Err(Broken::Cycle(String::from(id)));
            }
            let Some(entry) = entries.get(id) else {
                return Err(Broken::Missing(String::from(id)));
            };
            suffix.push((entry.id(), EntryClass::of(entry)));
            next = entry.parent_id();
        };
        Ok(Walked { junction, suffix })
    }

    /// Re-points the index at `leaf`: keeps the part of the path the new one shares, cuts the
    /// rest and adds the new part.
    pub fn follow(&mut self, leaf: Option<&str>, entries: &BTreeMap<String, SessionEntry>) {
        if self.broken.is_some() {
            self.clear();
        }
        let Some(leaf) = leaf else { return self.clear() };
        match self.walk(leaf, entries) {
            Ok(walked) => {
                self.truncate(walked.junction.map_or(0, |at| at + 1));
                for (id, class) in walked.suffix.into_iter().rev() {
                    self.push(id, class);
                }
            }
            Err(broken) => {
                self.clear();
                self.broken = Some(broken);
            }
        }
    }

    /// Whether replacing `old` by `new` (same id) can change the path, so it must be rebuilt: a
    /// path entry that moves or changes class, or any replacement while the chain is broken (it
    /// may re-point the broken chain; broken chains are rare).
    pub fn affected_by(&self, old: &SessionEntry, new: &SessionEntry) -> bool {
        match &self.broken {
            Some(_) => true,
            None => {
                self.position(new.id()).is_some()
                    && (old.parent_id() != new.parent_id()
                        || EntryClass::of(old) != EntryClass::of(new))
            }
        }
    }

    /// Whether adding an entry of id `id` (new to the session) can heal the path.
    pub fn healed_by(&self, id: &str) -> bool {
        matches!(&self.broken, Some(Broken::Missing(missing)) if missing == id)
    }

    /// The path root → `leaf` as a view over this index (the active path) and the entries that
    /// lead from it to `leaf`.
    pub fn view<'a>(
        &'a self,
        leaf: &'a str,
        entries: &'a BTreeMap<String, SessionEntry>,
    ) -> Result<PathView<'a>, Broken> {
        if self.ids.last().is_some_and(|last| last == leaf) {
            return Ok(PathView { index: self, prefix: self.len(), suffix: Vec::new() });
        }
        // A broken active path indexes nothing, so the walk goes all the way to the root.
        let mut walked = self.walk(leaf, entries)?;
        walked.suffix.reverse();
        let prefix = walked.junction.map_or(0, |at| at + 1);
        Ok(PathView { index: self, prefix, suffix: walked.suffix })
    }
}

/// One path root → leaf: the first `prefix` entries of the active path, then `suffix`.
#[derive(Debug)]
pub struct PathView<'a> {
    index: &'a PathIndex,
    prefix: usize,
    /// Root first.
    suffix: Vec<(&'a str, EntryClass)>,
}

impl PathView<'_> {
    pub fn len(&self) -> usize {
        self.prefix + self.suffix.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many entries, from the root, it shares with the active path.
    pub fn shared_len(&self) -> usize {
        self.prefix
    }

    /// The ids of its entries past the shared part, root first.
    pub fn own_ids(&self) -> impl Iterator<Item = &str> + '_ {
        self.suffix.iter().map(|(id, _)| *id)
    }

    /// How many of its entries are of each class (by discriminant).
    pub fn class_counts(&self) -> [usize; CLASSES] {
        let mut counts = [0; CLASSES];
        for (class, count) in counts.iter_mut().enumerate() {
            *count = self.index.by_class[class].partition_point(|&p| p < self.prefix);
        }
        for (_, class) in &self.suffix {
            counts[*class as usize] += 1;
        }
        counts
    }

    /// Position and class of `id` on the path.
    pub fn locate(&self, id: &str) -> Option<(usize, EntryClass)> {
        match self.index.position(id) {
            Some(at) if at < self.prefix => Some((at, self.index.classes[at])),
            _ => self
                .suffix
                .iter()
                .position(|(sid, _)| *sid == id)
                .map(|i| (self.prefix + i, self.suffix[i].1)),
        }
    }

    /// The id at `position`.
    pub fn id_at(&self, position: usize) -> Option<&str> {
        if position < self.prefix {
            return self.index.id_at(position);
        }
        self.suffix.get(position - self.prefix).map(|(id, _)| *id)
    }

    /// Positions, in path order, of the first `limit` entries of `classes` at or after `from`
    /// (`backward`: the last `limit` before `from`).
    pub fn select(
        &self,
        classes: EntryClasses,
        from: usize,
        backward: bool,
        limit: usize,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        let in_suffix = |i: usize| classes.contains(self.suffix[i].1);
        if backward {
            let end = from.min(self.len());
            // The suffix part, newest first.
            let mut i = end;
            while i > self.prefix && out.len() < limit {
                i -= 1;
                if in_suffix(i - self.prefix) {
                    out.push(i);
                }
            }
            let want = limit - out.len();
            out.extend(self.merge(classes, end.min(self.prefix), want, true));
            out.reverse();
        } else {
            let start = from.min(self.prefix);
            out.extend(self.merge(classes, start, limit, false));
            let mut i = from.max(self.prefix);
            while i < self.len() && out.len() < limit {
                if in_suffix(i - self.prefix) {
                    out.push(i);
                }
                i += 1;
            }
        }
        out
    }

    /// Up to `limit` positions of `classes` in the prefix: ascending from `at` (inclusive), or
    /// descending from below `at`. Each class's list gives its nearest `limit`; the nearest
    /// `limit` of those are the answer.
    fn merge(
        &self,
        classes: EntryClasses,
        at: usize,
        limit: usize,
        descending: bool,
    ) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for class in classes.members() {
            let list = &self.index.by_class[class];
            let split = list.partition_point(|&p| p < at);
            if descending {
                out.extend(list[..split].iter().rev().take(limit));
            } else {
                out.extend(list[split..].iter().take_while(|&&p| p < self.prefix).take(limit));
            }
        }
        crate::order::sort_by(&mut out, |a, b| if descending { b.cmp(a) } else { a.cmp(b) });
        out.truncate(limit);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{custom_entry, message_entry};
    use crate::record::{Record, SessionState};

    fn put(state: &mut SessionState, entry: SessionEntry) {
        state.apply(&Record::Entry { entry });
    }

    fn leaf(state: &mut SessionState, id: &str) {
        state.apply(&Record::Leaf { entry_id: Some(id.into()) });
    }

    /// The kept index is the one built from scratch, and `len` entries long.
    fn current(state: &SessionState, len: usize) {
        let rebuilt = PathIndex::build(state.leaf.as_deref(), &state.entries);
        assert_eq!(*state.path_index(), rebuilt);
        assert_eq!(state.path_index().len(), len);
    }

    #[test]
    fn the_kept_index_follows_leaf_moves_replacements_and_broken_chains() {
        let mut s = SessionState::default();
        put(&mut s, message_entry("a", None, 1, "a"));
        put(&mut s, custom_entry("b", Some("a"), 2));
        put(&mut s, message_entry("c", Some("b"), 3, "c"));
        put(&mut s, message_entry("x", Some("a"), 4, "x"));
        leaf(&mut s, "c");
        current(&s, 3);
        leaf(&mut s, "x");
        current(&s, 2);
        assert_eq!(s.path_index().position("c"), None, "cut ids are not on the path");
        leaf(&mut s, "c");
        current(&s, 3);
        // A replaced path entry that moves under another parent.
        put(&mut s, custom_entry("b", Some("x"), 2));
        current(&s, 4);
        // A dangling parent, healed by the missing entry.
        put(&mut s, message_entry("e", Some("d"), 6, "e"));
        leaf(&mut s, "e");
        assert_eq!(s.path_index().broken(), Some(&Broken::Missing("d".into())));
        put(&mut s, message_entry("d", Some("c"), 5, "d"));
        assert_eq!(s.path_index().broken(), None);
        current(&s, 6);
        // A cycle, then undone by a replacement.
        put(&mut s, message_entry("d", Some("e"), 5, "d"));
        assert_eq!(s.path_index().broken(), Some(&Broken::Cycle("e".into())));
        put(&mut s, message_entry("d", Some("c"), 5, "d"));
        current(&s, 6);
        // A dangling parent healed by re-pointing the entry that names it (model-test case).
        put(&mut s, message_entry("e", Some("zz"), 6, "e"));
        assert_eq!(s.path_index().broken(), Some(&Broken::Missing("zz".into())));
        put(&mut s, message_entry("e", Some("d"), 6, "e"));
        current(&s, 6);
        s.clear_entries();
        assert_eq!(s.path_index().broken(), Some(&Broken::Missing("e".into())));
        s.apply(&crate::record::Record::Leaf { entry_id: None });
        current(&s, 0);
    }
}

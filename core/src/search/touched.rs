//! What a change set does to the searched text of its session, for backends that keep a search
//! index beside their data: nothing, some entries (and the session's own text: title,
//! description, `updated_at`), or the whole session (trashed, restored, deleted, cleared).

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use crate::store::{ChangeSet, Write};

/// The searched text a change set changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// No searched text changes (the active leaf, attachments, expiry, the feed).
    Nothing,
    /// These entries (possibly none) and the session's own text.
    Entries(Vec<String>),
    /// Everything of the session: it is read again whole (or is gone).
    Session,
}

impl Touched {
    pub fn of(changes: &ChangeSet) -> Touched {
        let mut touched = Touched::Nothing;
        // Each id once, in the order first written: a set beside the list, so a change set of
        // many entries (an import) costs O(n log n), not O(n²).
        let mut seen = BTreeSet::new();
        for write in &changes.writes {
            let entry = match write {
                Write::DeleteEntries | Write::DeleteMeta | Write::Trash { .. } | Write::Restore => {
                    return Touched::Session
                }
                Write::PutEntry(entry) | Write::CommitAppend { entry, .. } => Some(entry.id()),
                Write::AppendDelta { delta, .. } => Some(delta.entry_id.as_str()),
                Write::PutMeta(_) => None,
                Write::SetActiveLeaf(_)
                | Write::DeleteActiveLeaf
                | Write::PutAttachment { .. }
                | Write::DeleteAttachment(_)
                | Write::DeleteAttachments
                | Write::SetExpiry(_)
                | Write::Feed { .. } => continue,
            };
            let ids = match &mut touched {
                Touched::Entries(ids) => ids,
                other => {
                    *other = Touched::Entries(Vec::new());
                    let Touched::Entries(ids) = other else { unreachable!() };
                    ids
                }
            };
            if let Some(id) = entry.filter(|id| seen.insert(*id)) {
                ids.push(String::from(id));
            }
        }
        touched
    }
}

#[cfg(all(test, feature = "conformance"))]
mod tests {
    use super::Touched;
    use crate::conformance::sample_meta;
    use crate::store::{ChangeSet, Write};

    #[test]
    fn a_change_set_touches_what_it_writes() {
        let set = |writes: alloc::vec::Vec<Write>| ChangeSet { session_id: "s".into(), writes };
        assert_eq!(Touched::of(&set(vec![Write::SetActiveLeaf("e".into())])), Touched::Nothing);
        assert_eq!(
            Touched::of(&set(vec![Write::PutMeta(sample_meta("s", 1))])),
            Touched::Entries(vec![])
        );
        assert_eq!(
            Touched::of(&set(vec![Write::PutMeta(sample_meta("s", 1)), Write::DeleteMeta])),
            Touched::Session
        );
    }
}

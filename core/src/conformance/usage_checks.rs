//! Conformance of usage totals (`usage_*`, issue 38): a store's kept tallies of every branch and
//! of the whole session equal the ones summed from its entries, through appends with and
//! without usage, usage replaced (on and off the active path), branches, leaf moves and deletes.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{apply, assistant_entry, commit, custom_entry, message_entry, sample_meta, Make};
use crate::path::walk;
use crate::store::{Store, Write};
use crate::usage::summed;

/// Whether `store`'s tallies of session `sid` — the branch to each of its entries, to no leaf,
/// and the whole session — equal the sums of the walked paths and of its entries.
pub fn usage_agrees(store: &dyn Store, sid: &str) -> Result<(), String> {
    let entries = store.list_entries(sid).map_err(|e| format!("list_entries: {e}"))?;
    let mut leaves: Vec<Option<String>> =
        entries.iter().map(|e| Some(String::from(e.id()))).collect();
    leaves.push(None);
    for leaf in &leaves {
        let path = match leaf {
            Some(leaf) => match walk(sid, leaf, |id| store.get_entry(sid, id)) {
                Ok(path) => path,
                Err(_) => continue, // a broken chain: the indexed checks judge its errors
            },
            None => Vec::new(),
        };
        let want = summed(path.iter(), entries.iter());
        let got = store.usage(sid, leaf.as_deref()).map_err(|e| format!("usage({leaf:?}): {e}"))?;
        if got != want {
            return Err(format!("usage of {sid} to {leaf:?}: kept {got:?}, summed {want:?}"));
        }
    }
    Ok(())
}

pub fn check_usage_totals(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let s = &*s;
    usage_agrees(s, "u")?;
    apply(s, "u", vec![Write::PutMeta(sample_meta("u", 1))])?;
    apply(s, "u", commit(message_entry("q1", None, 1, "hi"), false))?;
    apply(s, "u", commit(assistant_entry("a1", None, Some(100)), false))?;
    apply(s, "u", commit(custom_entry("c1", None, 2), false))?;
    apply(s, "u", commit(assistant_entry("a2", None, None), false))?;
    apply(s, "u", commit(assistant_entry("a3", None, Some(40)), false))?;
    usage_agrees(s, "u").map_err(|e| format!("appends: {e}"))?;
    // A branch from a1 with its own usage; the leaf moves there and back.
    apply(s, "u", commit(assistant_entry("b1", Some("a1"), Some(7)), true))?;
    apply(s, "u", commit(message_entry("b2", None, 3, "branch"), false))?;
    usage_agrees(s, "u").map_err(|e| format!("a branch: {e}"))?;
    apply(s, "u", vec![Write::SetActiveLeaf("a3".into())])?;
    usage_agrees(s, "u").map_err(|e| format!("leaf moved back: {e}"))?;
    // Usage replaced: on the active path (in the middle and at its end), and off it.
    apply(s, "u", vec![Write::PutEntry(assistant_entry("a1", Some("q1"), Some(5)))])?;
    apply(s, "u", vec![Write::PutEntry(assistant_entry("a3", Some("a2"), None))])?;
    apply(s, "u", vec![Write::PutEntry(assistant_entry("b1", Some("a1"), Some(900)))])?;
    usage_agrees(s, "u").map_err(|e| format!("usage replaced: {e}"))?;
    apply(s, "u", vec![Write::PutEntry(assistant_entry("a2", Some("c1"), Some(3)))])?;
    usage_agrees(s, "u").map_err(|e| format!("usage added: {e}"))?;
    apply(s, "u", vec![Write::DeleteEntries])?;
    usage_agrees(s, "u").map_err(|e| format!("entries deleted: {e}"))?;
    apply(s, "u", vec![Write::DeleteActiveLeaf, Write::DeleteMeta])?;
    usage_agrees(s, "u").map_err(|e| format!("session deleted: {e}"))
}

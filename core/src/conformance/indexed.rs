//! Conformance checks of a store's indexed reads (`indexed_*`, issue 12): `path_locate`,
//! `path_select` and `list_page` give what walking the chain and sorting every meta give
//! ([`indexed_reads_agree`], the oracle the model tests also run after every step; it checks the
//! kept usage totals too), through
//! appends, branches, leaf moves, replaced entries, broken chains and deletes.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{apply, commit, custom_entry, message_entry, sample_meta, Make};
use crate::error::StoreError;
use crate::meta_order::{sort_key, sorted_page, ListFilter, ListQuery};
use crate::path::{walked_locate, walked_select, PathSelect};
use crate::path_index::EntryClasses;
use crate::store::{Store, Write};
use crate::wire::{ListOrder, Object, Role, SessionEntry, SessionKind, SessionStatus};

/// The class sets the checks read with.
const CLASS_SETS: &[EntryClasses] = &[EntryClasses::ALL, EntryClasses::MESSAGES];

fn user_only() -> EntryClasses {
    EntryClasses::for_messages(Some(&[Role::User]), false)
}

/// How many reads [`indexed_reads_agree`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Every leaf, start and list position: for small stores (the conformance checks).
    Every,
    /// The active leaf and two others, a few starts, three list positions: cheap enough to run
    /// after every step of a model test.
    Sample,
}

/// Whether the indexed reads of session `sid` (its active path and the paths to its entries) and
/// the list pages agree with the walk and the sort; `Err` names the first that does not.
pub fn indexed_reads_agree(store: &dyn Store, sid: &str, probe: Probe) -> Result<(), String> {
    let ids: Vec<String> = store
        .list_entries(sid)
        .map_err(|e| format!("list_entries: {e}"))?
        .iter()
        .map(|e| String::from(e.id()))
        .collect();
    let mut leaves: Vec<String> = match probe {
        Probe::Every => ids.clone(),
        Probe::Sample => ids.first().into_iter().chain(ids.last()).cloned().collect(),
    };
    leaves.extend(store.get_active_leaf(sid).map_err(|e| format!("leaf: {e}"))?);
    leaves.push(String::from("no-such-entry"));
    for leaf in &leaves {
        path_reads_agree(store, sid, leaf, &ids, probe)?;
    }
    super::usage_agrees(store, sid)?;
    list_pages_agree(store, probe)
}

fn path_reads_agree(
    store: &dyn Store,
    sid: &str,
    leaf: &str,
    ids: &[String],
    probe: Probe,
) -> Result<(), String> {
    let walked = walked_locate(sid, leaf, None, |id| store.get_entry(sid, id));
    let indexed = store.path_locate(sid, leaf, None);
    if !same_outcome(&walked, &indexed) {
        return Err(format!("path_locate({sid}, {leaf}): walk {walked:?}, index {indexed:?}"));
    }
    let Ok(spot) = walked else { return Ok(()) };
    for id in ids.iter().map(String::as_str).chain(["no-such-entry"]) {
        let walked = walked_locate(sid, leaf, Some(id), |e| store.get_entry(sid, e)).map(|s| s.at);
        let indexed = store.path_locate(sid, leaf, Some(id)).map(|s| s.at);
        if !same_outcome(&walked, &indexed) {
            return Err(format!("locate {id} on {sid}/{leaf}: walk {walked:?}, index {indexed:?}"));
        }
    }
    let user = [user_only()];
    for &classes in CLASS_SETS.iter().chain(&user) {
        let froms: Vec<usize> = match probe {
            Probe::Every => (0..=spot.len + 1).collect(),
            Probe::Sample => vec![0, 1, spot.len / 2, spot.len],
        };
        for from in froms {
            for backward in [false, true] {
                for limit in [0, 1, 2, spot.len + 1] {
                    let q = PathSelect { classes, from, backward, limit };
                    let walked = walked_select(sid, leaf, &q, |id| store.get_entry(sid, id));
                    let indexed = store.path_select(sid, leaf, &q);
                    if !same_outcome(&walked, &indexed) {
                        return Err(format!(
                            "path_select {q:?} on {sid}/{leaf}: walk {walked:?}, index {indexed:?}"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The same answer, or the same failure: the same error, or (a bridge, whose main answers the
/// indexed read) the main's error carrying the walk's text — or, for a leaf that is no entry of
/// the session, the main's `session/entry_not_found` (a caller's mistake, not storage).
fn same_outcome<T: PartialEq>(
    walked: &Result<T, StoreError>,
    indexed: &Result<T, StoreError>,
) -> bool {
    match (walked, indexed) {
        (Ok(a), Ok(b)) => a == b,
        (
            Err(StoreError::Corrupt(_)),
            Err(StoreError::Remote { code: Some(crate::error::ErrorCode::EntryNotFound), .. }),
        ) => true,
        (Err(StoreError::Corrupt(text)), Err(StoreError::Remote { message, .. })) => {
            message.ends_with(text.as_str())
        }
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

fn list_pages_agree(store: &dyn Store, probe: Probe) -> Result<(), String> {
    let metas = store.list_metas().map_err(|e| format!("list_metas: {e}"))?;
    let team: Object = [(String::from("team"), serde_json::json!("t"))].into_iter().collect();
    let filters = [
        ListFilter::default(),
        ListFilter { metadata: Some(&team), ..ListFilter::default() },
        ListFilter {
            status: Some(SessionStatus::Working),
            kinds: Some(&[SessionKind::User]),
            ..ListFilter::default()
        },
    ];
    for order in [ListOrder::CreatedAsc, ListOrder::CreatedDesc, ListOrder::UpdatedDesc] {
        for filter in filters {
            let mut afters: Vec<Option<(i64, &str)>> = vec![None];
            let positions = metas.iter().map(|m| Some((sort_key(m, order), m.session_id.as_str())));
            match probe {
                Probe::Every => afters.extend(positions),
                Probe::Sample => afters.extend(positions.take(2)),
            }
            afters.push(Some((i64::MIN, "")));
            afters.push(Some((i64::MAX, "~")));
            for after in afters {
                for limit in [0, 1, 2, metas.len() + 1] {
                    let q = ListQuery { order, after, filter, limit };
                    let want = sorted_page(metas.clone(), &q);
                    let got = store.list_page(&q).map_err(|e| format!("list_page: {e}"))?;
                    if got != want {
                        return Err(format!("list_page {q:?}: sort {want:?}, index {got:?}"));
                    }
                }
            }
        }
    }
    Ok(())
}

fn agree(store: &dyn Store, sid: &str, when: &str) -> Result<(), String> {
    indexed_reads_agree(store, sid, Probe::Every).map_err(|e| format!("{when}: {e}"))
}

fn entry(id: &str, parent: Option<&str>, ts: i64, custom: bool) -> SessionEntry {
    if custom {
        custom_entry(id, parent, ts)
    } else {
        message_entry(id, parent, ts, id)
    }
}

pub fn check_indexed_path_reads(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let s = &*s;
    agree(s, "p", "unknown session")?;
    apply(s, "p", vec![Write::PutMeta(sample_meta("p", 1))])?;
    for (i, custom) in [false, true, false, false, true, false].into_iter().enumerate() {
        apply(s, "p", commit(entry(&format!("a{i}"), None, i as i64, custom), false))?;
        agree(s, "p", "appends")?;
    }
    // A branch from the middle, then the leaf moved back and forth.
    apply(s, "p", commit(entry("b0", Some("a2"), 10, false), true))?;
    apply(s, "p", commit(entry("b1", None, 11, true), false))?;
    agree(s, "p", "a branch")?;
    apply(s, "p", vec![Write::SetActiveLeaf("a5".into())])?;
    agree(s, "p", "leaf moved back")?;
    apply(s, "p", vec![Write::SetActiveLeaf("a1".into())])?;
    agree(s, "p", "leaf moved up the path")?;
    // A replaced entry that moves to another parent, or changes class.
    apply(s, "p", vec![Write::SetActiveLeaf("a5".into())])?;
    apply(s, "p", vec![Write::PutEntry(entry("a4", Some("b0"), 4, true))])?;
    agree(s, "p", "a path entry re-parented")?;
    apply(s, "p", vec![Write::PutEntry(entry("a3", Some("a2"), 3, true))])?;
    agree(s, "p", "a path entry's class changed")?;
    // Broken chains: a leaf on a missing entry, healed by putting it; a cycle, then undone.
    apply(s, "p", vec![Write::PutEntry(entry("c1", Some("c0"), 20, false))])?;
    apply(s, "p", vec![Write::SetActiveLeaf("c1".into())])?;
    agree(s, "p", "a dangling parent")?;
    apply(s, "p", vec![Write::PutEntry(entry("c0", Some("a1"), 19, false))])?;
    agree(s, "p", "the missing entry put")?;
    apply(s, "p", vec![Write::PutEntry(entry("c0", Some("c1"), 19, false))])?;
    agree(s, "p", "a cycle")?;
    apply(s, "p", vec![Write::PutEntry(entry("c0", None, 19, false))])?;
    agree(s, "p", "the cycle undone")?;
    apply(s, "p", vec![Write::DeleteEntries])?;
    agree(s, "p", "entries deleted under a leaf")?;
    apply(s, "p", vec![Write::DeleteActiveLeaf])?;
    agree(s, "p", "leaf deleted")
}

pub fn check_indexed_list_pages(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let s = &*s;
    agree(s, "none", "no sessions")?;
    for i in 0..6i64 {
        let sid = format!("s{}", (i * 7) % 6);
        let mut meta = sample_meta(&sid, i % 3);
        meta.updated_at = 10 - i % 4;
        if i % 2 == 0 {
            meta.metadata =
                Some([(String::from("team"), serde_json::json!("t"))].into_iter().collect());
        }
        if i % 3 == 1 {
            meta.status = SessionStatus::Working;
        }
        apply(s, &sid, vec![Write::PutMeta(meta)])?;
        agree(s, "none", "metas put")?;
    }
    let mut moved = sample_meta("s3", 0);
    moved.updated_at = 99;
    apply(s, "s3", vec![Write::PutMeta(moved)])?;
    agree(s, "none", "a meta moved in both orders")?;
    apply(s, "s1", vec![Write::DeleteMeta])?;
    agree(s, "none", "a meta deleted")
}

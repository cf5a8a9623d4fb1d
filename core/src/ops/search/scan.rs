//! The scan every backend can answer with: each session in scope is read, its own text and
//! every entry (or those on its active path) matched.

use alloc::vec::Vec;

use super::{Ask, Page};
use crate::error::Result;
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::wire::{SearchBranch, SearchKind, SessionEntry, SessionMeta};

pub(super) fn search(store: &dyn Store, ask: &Ask<'_>, page: &mut Page) -> Result<()> {
    for meta in store.list_metas()? {
        if ask.in_scope(&meta) {
            session(store, ask, &meta, page)?;
        }
    }
    Ok(())
}

/// Offers every hit of one session.
pub(super) fn session(
    store: &dyn Store,
    ask: &Ask<'_>,
    meta: &SessionMeta,
    page: &mut Page,
) -> Result<()> {
    ask.offer_session(meta, page);
    let wants_entries =
        ask.kinds.iter().any(|k| matches!(k, SearchKind::Message | SearchKind::Custom));
    if !wants_entries {
        return Ok(());
    }
    let sid = &meta.session_id;
    let entries: Vec<SessionEntry> = match ask.req.branch.unwrap_or_default() {
        SearchBranch::All => store.list_entries(sid)?,
        SearchBranch::Active => match store.get_active_leaf(sid)? {
            Some(leaf) => {
                let all = PathSelect {
                    classes: EntryClasses::ALL,
                    from: 0,
                    backward: false,
                    limit: usize::MAX,
                };
                store.path_select(sid, &leaf, &all)?.into_iter().map(|(_, e)| e).collect()
            }
            None => Vec::new(),
        },
    };
    for entry in &entries {
        ask.offer_entry(meta, entry, page);
    }
    Ok(())
}

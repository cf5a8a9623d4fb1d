//! Search through a backend's index: what the index does not cover is scanned, then candidates
//! are checked best bound first until no remaining one can enter the page. A candidate's bound
//! is at least its score, so the page is the scan's page; when the index's bounds are the scores
//! (`Found::exact`) only as many candidates are read as hits shown.

use alloc::collections::{BTreeMap, BinaryHeap};
use alloc::string::String;
use core::cmp::Reverse;

use super::{scan, Ask, Found, Page};
use crate::error::Result;
use crate::search::index::{Resolve, SearchIndex, Unindexed};
use crate::store::Store;
use crate::wire::{SearchBranch, SessionMeta};

/// Fills `page` from `index`.
pub(super) fn search(
    store: &dyn Store,
    index: &dyn SearchIndex,
    ask: &Ask<'_>,
    page: &mut Page,
) -> Result<()> {
    let mut wanted = ask.wanted();
    let takes_all = ask.req.metadata.is_none()
        && ask.req.session_ids.is_none()
        && ask.req.branch.unwrap_or_default() == SearchBranch::All;
    if takes_all {
        wanted.keep = Some(page.limit());
        wanted.after = page.cursor_key();
    }
    let found = index.find(ask.query, &wanted)?;
    let exact = found.exact;
    let resolver = &*found.resolver;
    let mut sessions = Sessions { store, resolver, ask, known: BTreeMap::new() };
    for unindexed in &found.unindexed {
        match unindexed {
            Unindexed::Session(sid) => {
                if let Some(meta) = sessions.meta(sid)? {
                    scan::session(store, ask, meta, page)?;
                }
            }
            Unindexed::Entries { session_id, entry_ids } => {
                let Some(meta) = sessions.meta(session_id)?.cloned() else { continue };
                ask.offer_session(&meta, page);
                for id in entry_ids {
                    if sessions.on_branch(session_id, id)? {
                        if let Some(entry) = store.get_entry(session_id, id)? {
                            ask.offer_entry(&meta, &entry, page);
                        }
                    }
                }
            }
        }
    }
    let mut best: BinaryHeap<(u64, i64, Reverse<u64>)> =
        found.candidates.iter().map(|c| (c.bound, c.timestamp, Reverse(c.doc))).collect();
    while let Some((bound, timestamp, Reverse(doc))) = best.pop() {
        if !page.may_take(bound, timestamp) {
            break; // the candidates left rank no higher than this one
        }
        if exact && page.before_cursor(bound, timestamp) {
            continue;
        }
        let doc = found.resolver.resolve(doc)?;
        let sid = &doc.session_id;
        let Some(id) = &doc.entry_id else {
            if let Some(meta) = sessions.meta(sid)? {
                ask.offer_session(meta, page);
            }
            continue;
        };
        if sessions.meta(sid)?.is_none() || !sessions.on_branch(sid, id)? {
            continue;
        }
        let Some(meta) = sessions.meta(sid)? else { continue };
        match &doc.text {
            Some(text) => {
                let entry = Found { id, kind: doc.kind, role: doc.role, timestamp };
                ask.offer_text(meta, entry, text, page);
            }
            None => {
                if let Some(entry) = store.get_entry(sid, id)? {
                    ask.offer_entry(meta, &entry, page);
                }
            }
        }
    }
    Ok(())
}

/// The sessions this search has read: their meta when listed and in scope (from the index when
/// it read them, else from the store), their active leaf.
struct Sessions<'a> {
    store: &'a dyn Store,
    resolver: &'a dyn Resolve,
    ask: &'a Ask<'a>,
    known: BTreeMap<String, (Option<SessionMeta>, Option<Option<String>>)>,
}

impl Sessions<'_> {
    fn meta(&mut self, sid: &str) -> Result<Option<&SessionMeta>> {
        if !self.known.contains_key(sid) {
            // A trashed session is not listed (its meta is parked in its lifecycle).
            let listed = match self.resolver.listed_meta(sid) {
                Some(meta) => Some(meta.clone()),
                None => self.store.listed_meta(sid)?,
            };
            let listed = listed.filter(|meta| self.ask.in_scope(meta));
            self.known.insert(String::from(sid), (listed, None));
        }
        Ok(self.known.get(sid).and_then(|(meta, _)| meta.as_ref()))
    }

    /// Whether `entry_id` is searched under the request's `branch`.
    fn on_branch(&mut self, sid: &str, entry_id: &str) -> Result<bool> {
        if self.ask.req.branch.unwrap_or_default() == SearchBranch::All {
            return Ok(true);
        }
        let store = self.store;
        let known = self.known.entry(String::from(sid)).or_insert((None, None));
        let leaf = match &known.1 {
            Some(leaf) => leaf.clone(),
            None => {
                let leaf = store.get_active_leaf(sid)?;
                known.1 = Some(leaf.clone());
                leaf
            }
        };
        Ok(match leaf {
            Some(leaf) => store.path_locate(sid, &leaf, Some(entry_id))?.at.is_some(),
            None => false,
        })
    }
}

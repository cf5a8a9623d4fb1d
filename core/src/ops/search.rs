//! `session::search` (extension, issue 39): every hit of a query across the sessions a caller
//! may see, best first, one page at a time. This is the scan every backend can answer with
//! (memory, the browser's workspace): each session's searched text is matched with the core's
//! rules (`crate::search`), so a backend that finds candidates another way still ranks and
//! cuts them the same.

use alloc::string::String;
use alloc::vec::Vec;

use crate::cursor::{self, ListCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::filter::metadata_matches;
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::search::{self, text, Query};
use crate::store::Store;
use crate::wire::{
    SearchBranch, SearchHit, SearchKind, SearchRequest, SearchResponse, SessionEntry, SessionMeta,
};

/// The order tag of a search cursor (a [`ListCursor`]: the last hit's timestamp, session id,
/// score and entry id).
const CURSOR_ORDER: &str = "search";

/// What may be a hit when the request does not say.
const ALL_KINDS: [SearchKind; 3] = [SearchKind::Message, SearchKind::Custom, SearchKind::Session];

/// A hit's place in the order: score high first, then newest, then session and entry id.
fn rank(hit: &SearchHit) -> (core::cmp::Reverse<u64>, core::cmp::Reverse<i64>, &str, Option<&str>) {
    use core::cmp::Reverse;
    (Reverse(hit.score), Reverse(hit.timestamp), &hit.session_id, hit.entry_id.as_deref())
}

pub fn decide(store: &dyn Store, env: &Env<'_>, req: SearchRequest) -> Result<SearchResponse> {
    let query = search::parse(&req.query).map_err(SessionError::invalid_request)?;
    let after = match req.cursor.as_deref() {
        Some(c) => Some(ListCursor::decode_tagged(c, CURSOR_ORDER)?),
        None => None,
    };
    let limit = env.limits.page_size(req.limit);
    let kinds = req.kinds.as_deref().unwrap_or(&ALL_KINDS);
    let mut page = Page { limit: limit + 1, hits: Vec::new(), after };
    for meta in store.list_metas()? {
        if !in_scope(&req, &meta) {
            continue;
        }
        search_session(store, &req, &query, kinds, &meta, &mut page)?;
    }
    let mut hits = page.hits;
    let more = hits.len() > limit;
    hits.truncate(limit);
    let next_cursor = more.then(|| {
        let last = &hits[limit - 1];
        cursor::encode(&ListCursor {
            o: String::from(CURSOR_ORDER),
            k: last.timestamp,
            id: last.session_id.clone(),
            s: Some(last.score),
            e: last.entry_id.clone(),
        })
    });
    Ok(SearchResponse { hits, next_cursor })
}

fn in_scope(req: &SearchRequest, meta: &SessionMeta) -> bool {
    req.session_ids.as_ref().is_none_or(|ids| ids.contains(&meta.session_id))
        && req
            .metadata
            .as_ref()
            .is_none_or(|filter| metadata_matches(filter, meta.metadata.as_ref()))
}

fn in_time(req: &SearchRequest, at: i64) -> bool {
    req.since.is_none_or(|since| at >= since) && req.until.is_none_or(|until| at < until)
}

/// The best `limit` hits seen so far that come after the cursor, in order.
struct Page {
    limit: usize,
    hits: Vec<SearchHit>,
    after: Option<ListCursor>,
}

impl Page {
    fn offer(&mut self, hit: SearchHit) {
        if let Some(c) = &self.after {
            let at = (
                core::cmp::Reverse(c.s.unwrap_or(0)),
                core::cmp::Reverse(c.k),
                c.id.as_str(),
                c.e.as_deref(),
            );
            if rank(&hit) <= at {
                return;
            }
        }
        let at = self.hits.partition_point(|h| rank(h) < rank(&hit));
        if at < self.limit {
            self.hits.insert(at, hit);
            self.hits.truncate(self.limit);
        }
    }
}

fn search_session(
    store: &dyn Store,
    req: &SearchRequest,
    query: &Query,
    kinds: &[SearchKind],
    meta: &SessionMeta,
    page: &mut Page,
) -> Result<()> {
    let sid = &meta.session_id;
    if kinds.contains(&SearchKind::Session) && req.roles.is_none() && in_time(req, meta.updated_at)
    {
        if let Some(m) = search::match_text(query, &text::session_text(meta)) {
            page.offer(hit(meta, None, SearchKind::Session, None, m, meta.updated_at));
        }
    }
    let wants_entries = kinds.iter().any(|k| matches!(k, SearchKind::Message | SearchKind::Custom));
    if !wants_entries {
        return Ok(());
    }
    let entries: Vec<SessionEntry> = match req.branch.unwrap_or_default() {
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
        let (kind, role) = match entry {
            SessionEntry::Message { message, .. } => (SearchKind::Message, Some(message.role())),
            SessionEntry::Custom { .. } => (SearchKind::Custom, None),
        };
        let role_ok = match (&req.roles, role) {
            (None, _) => true,
            (Some(roles), Some(role)) => roles.contains(&role),
            (Some(_), None) => false,
        };
        if !kinds.contains(&kind) || !role_ok || !in_time(req, entry.timestamp()) {
            continue;
        }
        if let Some(m) = search::match_text(query, &text::entry_text(entry)) {
            page.offer(hit(meta, Some(entry.id().into()), kind, role, m, entry.timestamp()));
        }
    }
    Ok(())
}

fn hit(
    meta: &SessionMeta,
    entry_id: Option<String>,
    kind: SearchKind,
    role: Option<crate::wire::Role>,
    m: search::Matched,
    timestamp: i64,
) -> SearchHit {
    SearchHit {
        session_id: meta.session_id.clone(),
        entry_id,
        kind,
        role,
        title: meta.title.clone(),
        snippet: m.snippet,
        highlights: m.highlights,
        score: m.score,
        timestamp,
    }
}

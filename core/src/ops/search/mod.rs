//! `session::search` (extension, issue 39): every hit of a query across the sessions a caller
//! may see, best first, one page at a time. Each candidate text is matched with the core's rules
//! (`crate::search`), whether it was found by a scan of every session (`scan.rs`: memory, the
//! browser's workspace, a bridge) or named by the backend's index (`indexed.rs`: fs), so both rank
//! and cut the same hits the same way (`page.rs`).

#[cfg(feature = "durable")]
mod indexed;
mod page;
mod scan;

use alloc::string::String;

use crate::cursor::{self, ListCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::filter::metadata_matches;
use crate::path_index::EntryClass;
use crate::search::{self, text, Query};
use crate::store::Store;
use crate::wire::{
    Role, SearchHit, SearchKind, SearchRequest, SearchResponse, SessionEntry, SessionMeta,
};
use page::Page;

/// The order tag of a search cursor (a [`ListCursor`]: the last hit's timestamp, session id,
/// score and entry id).
const CURSOR_ORDER: &str = "search";

/// What may be a hit when the request does not say.
const ALL_KINDS: [SearchKind; 3] = [SearchKind::Message, SearchKind::Custom, SearchKind::Session];

pub fn decide(store: &dyn Store, env: &Env<'_>, req: SearchRequest) -> Result<SearchResponse> {
    let query = search::parse(&req.query).map_err(SessionError::invalid_request)?;
    let after = match req.cursor.as_deref() {
        Some(c) => Some(ListCursor::decode_tagged(c, CURSOR_ORDER)?),
        None => None,
    };
    let limit = env.limits.page_size(req.limit);
    let ask = Ask { req: &req, query: &query, kinds: req.kinds.as_deref().unwrap_or(&ALL_KINDS) };
    let mut page = Page::new(limit + 1, after);
    #[cfg(feature = "durable")]
    let index = store.search_index();
    #[cfg(not(feature = "durable"))]
    let index: Option<()> = None;
    match index {
        #[cfg(feature = "durable")]
        Some(index) => indexed::search(store, index, &ask, &mut page)?,
        _ => scan::search(store, &ask, &mut page)?,
    }
    let mut hits = page.into_hits();
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

/// One search request, parsed.
struct Ask<'a> {
    req: &'a SearchRequest,
    query: &'a Query,
    kinds: &'a [SearchKind],
}

impl Ask<'_> {
    fn in_scope(&self, meta: &SessionMeta) -> bool {
        self.req.session_ids.as_ref().is_none_or(|ids| ids.contains(&meta.session_id))
            && self
                .req
                .metadata
                .as_ref()
                .is_none_or(|filter| metadata_matches(filter, meta.metadata.as_ref()))
    }

    fn wanted(&self) -> search::index::Wanted<'_> {
        search::index::Wanted {
            kinds: self.kinds,
            roles: self.req.roles.as_deref(),
            since: self.req.since,
            until: self.req.until,
            keep: None,
            after: None,
        }
    }

    /// Offers the session's own text (title, description) when it matches.
    fn offer_session(&self, meta: &SessionMeta, page: &mut Page) {
        if !self.wanted().admits(SearchKind::Session, None, meta.updated_at) {
            return;
        }
        if let Some(m) = search::match_text(self.query, &text::session_text(meta)) {
            page.offer(hit(meta, None, SearchKind::Session, None, m, meta.updated_at));
        }
    }

    /// Offers `entry` when it passes the filters and matches.
    fn offer_entry(&self, meta: &SessionMeta, entry: &SessionEntry, page: &mut Page) {
        let (kind, role) = EntryClass::of(entry).search_kind();
        if self.wanted().admits(kind, role, entry.timestamp()) {
            let found = Found { id: entry.id(), kind, role, timestamp: entry.timestamp() };
            self.offer_text(meta, found, &text::entry_text(entry), page);
        }
    }

    /// Offers an entry of `meta`'s session when its searched text matches.
    fn offer_text(&self, meta: &SessionMeta, entry: Found<'_>, text: &str, page: &mut Page) {
        if let Some(m) = search::match_text(self.query, text) {
            let Found { id, kind, role, timestamp } = entry;
            page.offer(hit(meta, Some(id.into()), kind, role, m, timestamp));
        }
    }
}

/// An entry that may be a hit, before its text is matched.
struct Found<'a> {
    id: &'a str,
    kind: SearchKind,
    role: Option<Role>,
    timestamp: i64,
}

fn hit(
    meta: &SessionMeta,
    entry_id: Option<String>,
    kind: SearchKind,
    role: Option<Role>,
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

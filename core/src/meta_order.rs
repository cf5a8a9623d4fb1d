//! Sessions in list order: the ordered, filtered page [`crate::store::Store::list_page`]
//! answers, kept as two ordered sets of `(key, session id)` by the stores that index their metas
//! (so a page costs the page plus the sessions its filter skips, not every session), and computed
//! by sorting every meta otherwise — the sort is also the index's test oracle.

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::ops::Bound;

use crate::filter::metadata_matches;
use crate::wire::{ListOrder, Object, SessionKind, SessionMeta, SessionStatus};

/// Which sessions a `session::list` page keeps: all supplied conditions must hold. Data borrowed
/// from the request, not a closure, so a bridge can send it to its main
/// (`session::store::list-page`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ListFilter<'a> {
    /// Only sessions with this status.
    pub status: Option<SessionStatus>,
    /// Only sessions whose kind is one of these; an empty list matches nothing.
    pub kinds: Option<&'a [SessionKind]>,
    /// Every given key must equal the stored `SessionMeta.metadata` value.
    pub metadata: Option<&'a Object>,
}

impl ListFilter<'_> {
    /// True when `meta` passes every condition.
    pub fn matches(&self, meta: &SessionMeta) -> bool {
        self.status.is_none_or(|s| meta.status == s)
            && self.kinds.is_none_or(|kinds| kinds.contains(&meta.kind))
            && self.metadata.is_none_or(|f| metadata_matches(f, meta.metadata.as_ref()))
    }
}

/// One page of `session::list` as a store answers it: at most `limit` metas that `filter`
/// keeps, in `order`, after the position `after` (a sort key and a session id).
#[derive(Debug, Clone, Copy)]
pub struct ListQuery<'a> {
    pub order: ListOrder,
    pub after: Option<(i64, &'a str)>,
    pub filter: ListFilter<'a>,
    pub limit: usize,
}

/// The key a meta sorts by in `order`.
pub fn sort_key(meta: &SessionMeta, order: ListOrder) -> i64 {
    match order {
        ListOrder::CreatedAsc | ListOrder::CreatedDesc => meta.created_at,
        ListOrder::UpdatedDesc => meta.updated_at,
    }
}

fn descending(order: ListOrder) -> bool {
    !matches!(order, ListOrder::CreatedAsc)
}

/// Compares two `(key, id)` positions in `order`.
fn compare(a: (i64, &str), b: (i64, &str), order: ListOrder) -> Ordering {
    let ascending = a.cmp(&b);
    if descending(order) {
        ascending.reverse()
    } else {
        ascending
    }
}

/// [`Store::list_page`](crate::store::Store::list_page) over every meta: filter, sort, cut.
pub fn sorted_page(metas: Vec<SessionMeta>, query: &ListQuery<'_>) -> Vec<SessionMeta> {
    let order = query.order;
    let mut metas: Vec<SessionMeta> = metas
        .into_iter()
        .filter(|m| query.filter.matches(m))
        .filter(|m| {
            query.after.is_none_or(|after| {
                compare((sort_key(m, order), &m.session_id), after, order) == Ordering::Greater
            })
        })
        .collect();
    crate::order::sort_by(&mut metas, |a, b| {
        compare((sort_key(a, order), &a.session_id), (sort_key(b, order), &b.session_id), order)
    });
    metas.truncate(query.limit);
    metas
}

/// Every listed session's position in the two sort keys, as `position_key`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaOrder {
    created: BTreeSet<String>,
    updated: BTreeSet<String>,
}

/// Hex digits of a position key's sort key.
const KEY_DIGITS: usize = 16;

/// The position `(key, session id)` as one string that sorts the same: the key as fixed-width hex
/// of its bits with the sign flipped, then the id. (A set of strings rather than of tuples: the
/// core already holds one, and the wasm bundle has a size budget.)
fn position_key(key: i64, sid: &str) -> String {
    let bits = (key as u64) ^ (1 << 63);
    let mut out = String::with_capacity(KEY_DIGITS + sid.len());
    for shift in (0..KEY_DIGITS).rev() {
        out.push(char::from(b"0123456789abcdef"[(bits >> (4 * shift)) as usize & 15]));
    }
    out.push_str(sid);
    out
}

impl MetaOrder {
    /// Moves session `sid` from where `old` put it to where `new` does (`None`: not listed).
    pub fn update(&mut self, sid: &str, old: Option<&SessionMeta>, new: Option<&SessionMeta>) {
        if let Some(old) = old {
            self.created.remove(&position_key(old.created_at, sid));
            self.updated.remove(&position_key(old.updated_at, sid));
        }
        if let Some(new) = new {
            self.created.insert(position_key(new.created_at, sid));
            self.updated.insert(position_key(new.updated_at, sid));
        }
    }

    /// Number of sessions ordered.
    pub fn len(&self) -> usize {
        self.created.len()
    }

    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
    }

    /// The page `query` asks for; `meta` finds a listed session's meta (borrowed from where the
    /// store keeps it, or decoded).
    pub fn page<'m>(
        &self,
        query: &ListQuery<'_>,
        meta: impl Fn(&str) -> Option<Cow<'m, SessionMeta>>,
    ) -> Vec<SessionMeta> {
        let set = match query.order {
            ListOrder::CreatedAsc | ListOrder::CreatedDesc => &self.created,
            ListOrder::UpdatedDesc => &self.updated,
        };
        let after = query.after.map(|(k, id)| position_key(k, id));
        let desc = descending(query.order);
        let bounds = match (&after, desc) {
            (Some(a), false) => (Bound::Excluded(a), Bound::Unbounded),
            (Some(a), true) => (Bound::Unbounded, Bound::Excluded(a)),
            (None, _) => (Bound::Unbounded, Bound::Unbounded),
        };
        let mut keys = set.range::<String, _>(bounds);
        let mut page = Vec::new();
        while page.len() < query.limit {
            let Some(key) = (if desc { keys.next_back() } else { keys.next() }) else { break };
            match meta(&key[KEY_DIGITS..]) {
                Some(m) if query.filter.matches(&m) => page.push(m.into_owned()),
                _ => {}
            }
        }
        page
    }
}

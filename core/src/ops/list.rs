//! `session::list`: filter, order and page every session's meta (contract §2.4, §7.1).

use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::Plan;
use crate::cursor::{self, ListCursor};
use crate::env::Env;
use crate::error::Result;
use crate::filter::metadata_matches;
use crate::store::Store;
use crate::wire::{ListOrder, ListRequest, ListResponse, SessionMeta};

fn sort_key(meta: &SessionMeta, order: ListOrder) -> i64 {
    match order {
        ListOrder::CreatedAsc | ListOrder::CreatedDesc => meta.created_at,
        ListOrder::UpdatedDesc => meta.updated_at,
    }
}

/// Compares two `(key, id)` positions in the requested order.
fn compare(a: (i64, &str), b: (i64, &str), order: ListOrder) -> Ordering {
    let ascending = a.cmp(&b);
    match order {
        ListOrder::CreatedAsc => ascending,
        ListOrder::CreatedDesc | ListOrder::UpdatedDesc => ascending.reverse(),
    }
}

pub fn decide(store: &dyn Store, env: &Env<'_>, req: ListRequest) -> Result<Plan<ListResponse>> {
    let order = req.order.unwrap_or_default();
    let after = req.cursor.as_deref().map(|c| ListCursor::decode_for(c, order)).transpose()?;
    let mut metas: Vec<SessionMeta> = store
        .list_metas()?
        .into_iter()
        .filter(|m| req.status.is_none_or(|s| m.status == s))
        .filter(|m| req.kinds.as_ref().is_none_or(|kinds| kinds.contains(&m.kind)))
        .filter(|m| req.metadata.as_ref().is_none_or(|f| metadata_matches(f, m.metadata.as_ref())))
        .collect();
    crate::order::sort_by(&mut metas, |a, b| {
        compare((sort_key(a, order), &a.session_id), (sort_key(b, order), &b.session_id), order)
    });
    let start = match &after {
        Some(c) => metas
            .iter()
            .take_while(|m| {
                compare((sort_key(m, order), &m.session_id), (c.k, &c.id), order)
                    != Ordering::Greater
            })
            .count(),
        None => 0,
    };
    let limit = env.limits.page_size(req.limit);
    let end = (start + limit).min(metas.len());
    let next_cursor = (end < metas.len()).then(|| {
        let last = &metas[end - 1];
        cursor::encode(&ListCursor {
            o: String::from(order.as_str()),
            k: sort_key(last, order),
            id: last.session_id.clone(),
        })
    });
    let sessions = metas.drain(start.min(end)..end).collect();
    Ok(Plan::read(ListResponse { sessions, next_cursor }))
}

//! `session::list`: filter, order and page every session's meta (contract §2.4, §7.1), one page
//! asked of the store ([`Store::list_page`]).

use alloc::string::String;

use crate::cursor::{self, ListCursor};
use crate::env::Env;
use crate::error::Result;
use crate::meta_order::{sort_key, ListFilter, ListQuery};
use crate::store::Store;
use crate::wire::{ListRequest, ListResponse};

pub fn decide(store: &dyn Store, env: &Env<'_>, req: ListRequest) -> Result<ListResponse> {
    let order = req.order.unwrap_or_default();
    let after = req.cursor.as_deref().map(|c| ListCursor::decode_for(c, order)).transpose()?;
    let filter = ListFilter {
        status: req.status,
        kinds: req.kinds.as_deref(),
        metadata: req.metadata.as_ref(),
    };
    let limit = env.limits.page_size(req.limit);
    // One more than the page tells whether another page follows.
    let mut sessions = store.list_page(&ListQuery {
        order,
        after: after.as_ref().map(|c| (c.k, c.id.as_str())),
        filter,
        limit: limit + 1,
    })?;
    let more = sessions.len() > limit;
    sessions.truncate(limit);
    let next_cursor = more.then(|| {
        let last = &sessions[limit - 1];
        cursor::encode(&ListCursor {
            o: String::from(order.as_str()),
            k: sort_key(last, order),
            id: last.session_id.clone(),
            s: None,
            e: None,
        })
    });
    Ok(ListResponse { sessions, next_cursor })
}

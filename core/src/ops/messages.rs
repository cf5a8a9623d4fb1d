//! `session::messages`: the active (or a chosen) path as items, filtered by role and paged by an
//! entry cursor (contract §2.13, §7.2).

use alloc::vec::Vec;

use super::{require_entry, require_meta, Plan};
use crate::cursor::{self, EntryCursor};
use crate::env::Env;
use crate::error::Result;
use crate::path;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesRequest, MessagesResponse, SessionEntry};

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesRequest,
) -> Result<Plan<MessagesResponse>> {
    let sid = &req.session_id;
    require_meta(store, sid)?;
    let leaf = match &req.from_entry_id {
        Some(from) => Some(require_entry(store, sid, from)?.id().into()),
        None => store.get_active_leaf(sid)?,
    };
    let Some(leaf) = leaf else {
        return Ok(Plan::read(MessagesResponse { messages: Vec::new(), next_cursor: None }));
    };
    let include_custom = req.include_custom.unwrap_or(false);
    let keep = |e: &SessionEntry| match (e.message(), &req.roles) {
        (Some(m), Some(roles)) => roles.contains(&m.role()),
        (Some(_), None) => true,
        (None, roles) => include_custom && roles.is_none(),
    };
    let filtered: Vec<SessionEntry> =
        path::path_to(store, sid, &leaf)?.into_iter().filter(|e| keep(e)).collect();
    let after = match (&req.cursor, &req.after_entry_id) {
        (Some(c), _) => Some(cursor::decode::<EntryCursor>(c)?.id),
        (None, Some(after)) => Some(after.clone()),
        (None, None) => None,
    };
    let ids: Vec<&str> = filtered.iter().map(SessionEntry::id).collect();
    let limit = env.limits.page_size(req.limit);
    let (range, next_cursor) = cursor::entry_page(&ids, after.as_deref(), limit)?;
    let include_images = req.include_image_data.unwrap_or(true);
    let messages = filtered[range].iter().map(|e| view::message_item(e, include_images)).collect();
    Ok(Plan::read(MessagesResponse { messages, next_cursor }))
}

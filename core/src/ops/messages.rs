//! `session::messages`: the active (or a chosen) path as items, filtered by role and paged by an
//! entry cursor (contract §2.13, §7.2).

use alloc::vec::Vec;

use super::{require_entry, require_meta, Plan};
use crate::cursor::{self, EntryCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesRequest, MessagesResponse, SessionEntry};

pub fn decide(store: &dyn Store, env: &Env<'_>, req: MessagesRequest) -> Result<Plan<MessagesResponse>> {
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
    let anchor = match (&req.cursor, &req.after_entry_id) {
        (Some(c), _) => Some(cursor::decode::<EntryCursor>(c)?.id),
        (None, Some(after)) => Some(after.clone()),
        (None, None) => None,
    };
    let start = match anchor {
        Some(id) => {
            filtered.iter().position(|e| e.id() == id).ok_or_else(|| {
                SessionError::invalid_cursor("the cursor entry is not on the requested path")
            })? + 1
        }
        None => 0,
    };
    let limit = env.limits.page_size(req.limit);
    let end = (start + limit).min(filtered.len());
    let include_images = req.include_image_data.unwrap_or(true);
    let messages = filtered[start.min(end)..end]
        .iter()
        .map(|e| view::message_item(e, include_images))
        .collect::<Vec<_>>();
    let next_cursor = (end < filtered.len())
        .then(|| cursor::encode(&EntryCursor { id: filtered[end - 1].id().into() }));
    Ok(Plan::read(MessagesResponse { messages, next_cursor }))
}

//! `session::messages`: the active (or a chosen) path as items, filtered by role and paged by an
//! entry cursor (contract §2.13, §7.2). One page is one indexed window of the store
//! ([`Store::path_select`]), not a walk of the path.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{stored_entry, stored_meta};
use crate::cursor::{self, EntryCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesRequest, MessagesResponse};

pub fn decide(store: &dyn Store, env: &Env<'_>, req: MessagesRequest) -> Result<MessagesResponse> {
    let sid = &req.session_id;
    stored_meta(store, sid)?;
    let leaf = match &req.from_entry_id {
        Some(from) => Some(stored_entry(store, sid, from)?.id().into()),
        None => store.get_active_leaf(sid)?,
    };
    let Some(leaf) = leaf else {
        return Ok(MessagesResponse { messages: Vec::new(), next_cursor: None });
    };
    let classes =
        EntryClasses::for_messages(req.roles.as_deref(), req.include_custom.unwrap_or(false));
    let after = match (&req.cursor, &req.after_entry_id) {
        (Some(c), _) => Some(cursor::decode::<EntryCursor>(c)?.id),
        (None, Some(after)) => Some(after.clone()),
        (None, None) => None,
    };
    // The page starts just past `after`, which must be on the filtered path.
    let from = match &after {
        Some(id) => match store.path_locate(sid, &leaf, Some(id))?.at {
            Some((at, class)) if classes.contains(class) => at + 1,
            _ => return Err(not_on_path(id)),
        },
        None => 0,
    };
    let limit = env.limits.page_size(req.limit);
    // One more than the page tells whether another page follows.
    let query = PathSelect { classes, from, backward: false, limit: limit + 1 };
    let mut page = store.path_select(sid, &leaf, &query)?;
    let more = page.len() > limit;
    page.truncate(limit);
    let next_cursor =
        more.then(|| cursor::encode(&EntryCursor { id: String::from(page[limit - 1].1.id()) }));
    let include_images = req.include_image_data.unwrap_or(true);
    let messages = page.iter().map(|(_, e)| view::message_item(e, include_images)).collect();
    Ok(MessagesResponse { messages, next_cursor })
}

/// A cursor or watermark entry that is not on the (filtered) path read.
pub(crate) fn not_on_path(id: &str) -> SessionError {
    SessionError::invalid_cursor(format!("entry {id} is not on the requested path"))
}

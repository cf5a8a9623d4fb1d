//! `session::messages-range`: whole entries of the active path by span or by id list — how a
//! reader swaps collapsed placeholders for content (contract §8.6).

use alloc::format;
use alloc::vec::Vec;

use super::{require_meta, Plan};
use crate::cursor::{self, EntryCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesRangeRequest, MessagesRangeResponse, SessionEntry};

/// Index of `id` on the path: `entry_not_found` if it exists nowhere in the session,
/// `invalid_cursor` if it is on another branch.
fn position(store: &dyn Store, sid: &str, path: &[SessionEntry], id: &str) -> Result<usize> {
    if let Some(i) = path.iter().position(|e| e.id() == id) {
        return Ok(i);
    }
    if store.get_entry(sid, id)?.is_none() {
        return Err(SessionError::entry_not_found(sid, id));
    }
    Err(SessionError::invalid_cursor(format!("entry {id} is not on the active path")))
}

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesRangeRequest,
) -> Result<Plan<MessagesRangeResponse>> {
    let sid = &req.session_id;
    require_meta(store, sid)?;
    let path = path::active_path(store, sid)?;
    let selected: Vec<usize> = match (&req.from_entry_id, &req.to_entry_id, &req.entry_ids) {
        (Some(from), Some(to), None) => {
            let (a, b) = (position(store, sid, &path, from)?, position(store, sid, &path, to)?);
            if a > b {
                return Err(SessionError::invalid_request(format!(
                    "from_entry_id {from} comes after to_entry_id {to} on the active path"
                )));
            }
            (a..=b).collect()
        }
        (None, None, Some(ids)) => {
            // Sorted and deduplicated as a set would be, without a set type in the bundle.
            let mut positions = Vec::with_capacity(ids.len());
            for id in ids {
                positions.push(position(store, sid, &path, id)?);
            }
            crate::order::sort_by(&mut positions, usize::cmp);
            positions.dedup();
            positions
        }
        _ => {
            return Err(SessionError::invalid_request(
                "give exactly one selector: from_entry_id + to_entry_id, or entry_ids",
            ))
        }
    };
    let after = req.cursor.as_deref().map(cursor::decode::<EntryCursor>).transpose()?;
    let ids: Vec<&str> = selected.iter().map(|&i| path[i].id()).collect();
    let limit = env.limits.page_size(req.limit);
    let (range, next_cursor) =
        cursor::entry_page(&ids, after.as_ref().map(|c| c.id.as_str()), limit)?;
    let include_images = req.include_image_data.unwrap_or(true);
    let messages =
        selected[range].iter().map(|&i| view::tail_item(&path[i], include_images)).collect();
    Ok(Plan::read(MessagesRangeResponse { messages, next_cursor }))
}

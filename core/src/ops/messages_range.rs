//! `session::messages-range`: whole entries of the active path by span or by id list — how a
//! reader swaps collapsed placeholders for content (contract §8.6). Positions come from the
//! store's path index ([`Store::path_locate`]), a span's page from one window of it.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::messages::not_on_path;
use super::stored_meta;
use crate::cursor::{self, EntryCursor};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path::PathSelect;
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesRangeRequest, MessagesRangeResponse, SessionEntry};

/// The active path of one session, asked by position.
struct ActivePath<'a> {
    store: &'a dyn Store,
    sid: &'a str,
    leaf: Option<String>,
}

impl ActivePath<'_> {
    /// Position of `id` on the path: `entry_not_found` if it exists nowhere in the session,
    /// `invalid_cursor` if it is on another branch.
    fn position(&self, id: &str) -> Result<usize> {
        if let Some(at) = self.find(id)? {
            return Ok(at);
        }
        if self.store.get_entry(self.sid, id)?.is_none() {
            return Err(SessionError::entry_not_found(self.sid, id));
        }
        Err(SessionError::invalid_cursor(format!("entry {id} is not on the active path")))
    }

    fn find(&self, id: &str) -> Result<Option<usize>> {
        let Some(leaf) = &self.leaf else { return Ok(None) };
        Ok(self.store.path_locate(self.sid, leaf, Some(id))?.at.map(|(at, _)| at))
    }

    /// The entries at positions `from..from + count`.
    fn window(&self, from: usize, count: usize) -> Result<Vec<SessionEntry>> {
        let Some(leaf) = &self.leaf else { return Ok(Vec::new()) };
        let query = PathSelect { classes: EntryClasses::ALL, from, backward: false, limit: count };
        Ok(self.store.path_select(self.sid, leaf, &query)?.into_iter().map(|(_, e)| e).collect())
    }
}

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesRangeRequest,
) -> Result<MessagesRangeResponse> {
    let sid = &req.session_id;
    stored_meta(store, sid)?;
    let path = ActivePath { store, sid, leaf: store.get_active_leaf(sid)? };
    if let Some(leaf) = &path.leaf {
        // A broken chain fails every read of the path, as a walk of it does.
        store.path_locate(sid, leaf, None)?;
    }
    // What the request selects, as positions: a span `a..=b`, or listed ids by position.
    let (span, listed) = match (&req.from_entry_id, &req.to_entry_id, &req.entry_ids) {
        (Some(from), Some(to), None) => {
            let (a, b) = (path.position(from)?, path.position(to)?);
            if a > b {
                return Err(SessionError::invalid_request(format!(
                    "from_entry_id {from} comes after to_entry_id {to} on the active path"
                )));
            }
            (Some((a, b)), Vec::new())
        }
        (None, None, Some(ids)) => {
            // Sorted and deduplicated as a set would be, without a set type in the bundle.
            let mut positions = Vec::with_capacity(ids.len());
            for id in ids {
                positions.push((path.position(id)?, id.as_str()));
            }
            crate::order::sort_by(&mut positions, |a, b| a.0.cmp(&b.0));
            positions.dedup_by_key(|p| p.0);
            (None, positions)
        }
        _ => {
            return Err(SessionError::invalid_request(
                "give exactly one selector: from_entry_id + to_entry_id, or entry_ids",
            ))
        }
    };
    let len = span.map_or(listed.len(), |(a, b)| b + 1 - a);
    // Index in the selection of the entry at path position `at`.
    let index_of = |at: usize| match span {
        Some((a, b)) => (a..=b).contains(&at).then(|| at - a),
        None => listed.iter().position(|p| p.0 == at),
    };
    let after = req.cursor.as_deref().map(cursor::decode::<EntryCursor>).transpose()?;
    let start = match after {
        Some(c) => path.find(&c.id)?.and_then(index_of).ok_or_else(|| not_on_path(&c.id))? + 1,
        None => 0,
    };
    let end = (start + env.limits.page_size(req.limit)).min(len);
    let page = match span {
        Some((a, _)) => path.window(a + start, end.saturating_sub(start))?,
        None => {
            let mut page = Vec::new();
            for &(at, id) in &listed[start.min(end)..end] {
                page.push(store.get_entry(sid, id)?.ok_or_else(|| {
                    SessionError::storage(format!("entry {id} at {at} of the path is missing"))
                })?);
            }
            page
        }
    };
    let more = end < len;
    let next_cursor = match page.last() {
        Some(last) if more => Some(cursor::encode(&EntryCursor { id: String::from(last.id()) })),
        _ => None,
    };
    let include_images = req.include_image_data.unwrap_or(true);
    let messages = page.iter().map(|e| view::tail_item(e, include_images)).collect();
    Ok(MessagesRangeResponse { messages, next_cursor })
}

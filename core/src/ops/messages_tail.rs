//! `session::messages-tail`: the newest page of the active path in whole blocks, activity runs
//! collapsed to placeholders, paged backwards by anchor (contract §8.5).
//!
//! The path is walked lazily from the leaf, newest first, so a page costs what it shows plus the
//! distance to its anchors — not the length of the session. Blocks are maximal runs of members
//! or single non-members, which segment the same way from either end.

use alloc::vec::Vec;

use super::{require_meta, Plan};
use crate::blocks::{self, is_run_member};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path::BackWalk;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesTailRequest, MessagesTailResponse, SessionEntry};

/// The filtered active path, newest first, loaded only as far as asked.
struct NewestFirst<'a> {
    walk: BackWalk<'a>,
    include_custom: bool,
    loaded: Vec<SessionEntry>,
    done: bool,
}

impl NewestFirst<'_> {
    /// Loads until index `i` exists; false when the path is shorter.
    fn has(&mut self, i: usize) -> Result<bool> {
        while self.loaded.len() <= i && !self.done {
            match self.walk.step()? {
                Some(e) if self.include_custom || e.is_message() => self.loaded.push(e),
                Some(_) => {}
                None => self.done = true,
            }
        }
        Ok(i < self.loaded.len())
    }

    /// Index of entry `id`, or `session/invalid_cursor` when it is not on the filtered path.
    fn find(&mut self, id: &str) -> Result<usize> {
        let mut i = 0;
        while self.has(i)? {
            if self.loaded[i].id() == id {
                return Ok(i);
            }
            i += 1;
        }
        Err(SessionError::invalid_cursor(alloc::format!("entry {id} is not on the active path")))
    }

    /// One past the oldest index of the block that starts (newest side) at `i`.
    fn block_end(&mut self, i: usize) -> Result<usize> {
        let mut end = i + 1;
        if is_run_member(&self.loaded[i]) {
            while self.has(end)? && is_run_member(&self.loaded[end]) {
                end += 1;
            }
        }
        Ok(end)
    }
}

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesTailRequest,
) -> Result<Plan<MessagesTailResponse>> {
    let sid = &req.session_id;
    require_meta(store, sid)?;
    let Some(leaf) = store.get_active_leaf(sid)? else {
        return Ok(Plan::read(MessagesTailResponse {
            messages: Vec::new(),
            has_more: false,
            oldest_entry_id: None,
        }));
    };
    let mut path = NewestFirst {
        walk: BackWalk::new(store, sid, &leaf),
        include_custom: req.include_custom.unwrap_or(true),
        loaded: Vec::new(),
        done: false,
    };
    // The page starts (newest side) just past the block holding `before_entry_id`.
    let page_start = match &req.before_entry_id {
        // A block extends older than any of its members, so its oldest end is reached from
        // the anchor itself.
        Some(id) => {
            let anchor = path.find(id)?;
            path.block_end(anchor)?
        }
        None => 0,
    };
    let until = match &req.until_entry_id {
        Some(id) => Some(path.find(id)?),
        None => None,
    };
    // Blocks of the page as newest-first index ranges [from, to).
    let mut page: Vec<(usize, usize)> = Vec::new();
    let mut next = page_start;
    let limit = env.limits.page_size(req.limit);
    while path.has(next)? && (page.len() < limit || until.is_some_and(|u| u >= next)) {
        let end = path.block_end(next)?;
        page.push((next, end));
        next = end;
    }
    let has_more = path.has(next)?;
    let include_images = req.include_image_data.unwrap_or(true);
    let mut messages = Vec::new();
    for &(from, to) in page.iter().rev() {
        let mut block: Vec<SessionEntry> = path.loaded[from..to].to_vec();
        block.reverse();
        if is_run_member(&block[0]) {
            messages.extend(blocks::collapse_run(&block, include_images));
        } else {
            messages.extend(block.iter().map(|e| view::tail_item(e, include_images)));
        }
    }
    let oldest_entry_id = messages.first().map(|m| m.entry_id.clone());
    Ok(Plan::read(MessagesTailResponse { messages, has_more, oldest_entry_id }))
}

//! `session::messages-tail`: the newest page of the active path in whole blocks, activity runs
//! collapsed to placeholders, paged backwards by anchor (contract §8.5).
//!
//! The path is read from the store's index in windows, newest first, from the page's anchor, so
//! a page costs what it shows plus the run it ends in — not the length of the session nor the
//! distance of the anchor from the leaf. Blocks are maximal runs of members or single
//! non-members, which segment the same way from either end.

use alloc::vec::Vec;

use super::newest_first::NewestFirst;
use super::stored_meta;
use crate::blocks::{self, is_run_member};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesTailRequest, MessagesTailResponse, SessionEntry};

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesTailRequest,
) -> Result<MessagesTailResponse> {
    let sid = &req.session_id;
    stored_meta(store, sid)?;
    let Some(leaf) = store.get_active_leaf(sid)? else {
        return Ok(MessagesTailResponse {
            messages: Vec::new(),
            has_more: false,
            oldest_entry_id: None,
        });
    };
    let classes = match req.include_custom.unwrap_or(true) {
        true => EntryClasses::ALL,
        false => EntryClasses::MESSAGES,
    };
    // Path position of an anchor, which must be on the filtered path.
    let position = |id: &str| -> Result<usize> {
        match store.path_locate(sid, &leaf, Some(id))?.at {
            Some((at, class)) if classes.contains(class) => Ok(at),
            _ => Err(SessionError::invalid_cursor(alloc::format!(
                "entry {id} is not on the active path"
            ))),
        }
    };
    let anchor = req.before_entry_id.as_deref().map(position).transpose()?;
    let until = req.until_entry_id.as_deref().map(position).transpose()?;
    let len = store.path_locate(sid, &leaf, None)?.len;
    // From the anchor itself: a block extends older than any of its members, so its oldest end
    // is reached from the anchor.
    let from = anchor.map_or(len, |at| at + 1);
    let window = env.limits.page_size(req.limit).saturating_add(1);
    let mut path = NewestFirst::new(store, sid, &leaf, classes, from, window);
    // The page starts (newest side) just past the block holding `before_entry_id`.
    let page_start = match anchor {
        Some(_) if path.has(0)? => block_end(&mut path, 0)?,
        _ => 0,
    };
    // Blocks of the page as newest-first index ranges [from, to).
    let mut page: Vec<(usize, usize)> = Vec::new();
    let mut next = page_start;
    let limit = env.limits.page_size(req.limit);
    while path.has(next)? && (page.len() < limit || until.is_some_and(|u| u <= path.loaded[next].0))
    {
        let end = block_end(&mut path, next)?;
        page.push((next, end));
        next = end;
    }
    let has_more = path.has(next)?;
    let include_images = req.include_image_data.unwrap_or(true);
    let mut messages = Vec::new();
    for &(from, to) in page.iter().rev() {
        let mut block: Vec<SessionEntry> =
            path.loaded[from..to].iter().map(|(_, e)| e.clone()).collect();
        block.reverse();
        if is_run_member(&block[0]) {
            messages.extend(blocks::collapse_run(&block, include_images));
        } else {
            messages.extend(block.iter().map(|e| view::tail_item(e, include_images)));
        }
    }
    let oldest_entry_id = messages.first().map(|m| m.entry_id.clone());
    Ok(MessagesTailResponse { messages, has_more, oldest_entry_id })
}

/// One past the oldest index of the block that starts (newest side) at `i`.
fn block_end(path: &mut NewestFirst<'_>, i: usize) -> Result<usize> {
    let mut end = i + 1;
    if is_run_member(&path.loaded[i].1) {
        while path.has(end)? && is_run_member(&path.loaded[end].1) {
            end += 1;
        }
    }
    Ok(end)
}

//! `session::messages-tail`: the newest page of the active path in whole blocks, activity runs
//! collapsed to placeholders, paged backwards by anchor (contract §8.5).

use alloc::vec::Vec;

use super::{require_meta, Plan};
use crate::blocks::{self, Block, BlockKind};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::path;
use crate::store::Store;
use crate::view;
use crate::wire::{MessagesTailRequest, MessagesTailResponse, SessionEntry};

/// Index of the block holding entry `id` of the filtered path, or `session/invalid_cursor`.
fn block_of(path: &[SessionEntry], blocks: &[Block], id: &str) -> Result<usize> {
    let index = path.iter().position(|e| e.id() == id).ok_or_else(|| {
        SessionError::invalid_cursor(alloc::format!("entry {id} is not on the active path"))
    })?;
    Ok(blocks.partition_point(|b| b.end <= index))
}

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: MessagesTailRequest,
) -> Result<Plan<MessagesTailResponse>> {
    let sid = &req.session_id;
    require_meta(store, sid)?;
    let empty = MessagesTailResponse { messages: Vec::new(), has_more: false, oldest_entry_id: None };
    let Some(leaf) = store.get_active_leaf(sid)? else {
        return Ok(Plan::read(empty));
    };
    let include_custom = req.include_custom.unwrap_or(true);
    let path: Vec<SessionEntry> = path::path_to(store, sid, &leaf)?
        .into_iter()
        .filter(|e| include_custom || e.is_message())
        .collect();
    let blocks = blocks::segment(&path);
    let end = match &req.before_entry_id {
        Some(id) => block_of(&path, &blocks, id)?,
        None => blocks.len(),
    };
    let limit = env.limits.page_size(req.limit);
    let mut start = end.saturating_sub(limit);
    if let Some(id) = &req.until_entry_id {
        start = start.min(block_of(&path, &blocks, id)?);
    }
    let include_images = req.include_image_data.unwrap_or(true);
    let mut messages = Vec::new();
    for block in &blocks[start..end] {
        let entries = &path[block.start..block.end];
        match block.kind {
            BlockKind::Single => {
                messages.extend(entries.iter().map(|e| view::tail_item(e, include_images)))
            }
            BlockKind::ActivityRun => messages.extend(blocks::collapse_run(entries, include_images)),
        }
    }
    let oldest_entry_id = messages.first().map(|m| m.entry_id.clone());
    Ok(Plan::read(MessagesTailResponse { messages, has_more: start > 0, oldest_entry_id }))
}

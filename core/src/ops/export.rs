//! `session::export` (extension, issue 40): one session written in another agent's format
//! ([`crate::formats`]): every branch for `pi` and `claude-code`, the active one for `openai`
//! and `ui-message`. A read: the session's meta, entries and leaf, then the format's writer.

use alloc::string::String;

use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::formats::Conversation;
use crate::store::Store;
use crate::wire::{ExportRequest, ExportResponse};

/// The session as a conversation: its meta, every entry (parents first) and its active leaf.
pub fn conversation(store: &dyn Store, session_id: &str) -> Result<Conversation> {
    let meta =
        store.get_meta(session_id)?.ok_or_else(|| SessionError::session_not_found(session_id))?;
    let entries = store.list_entries(session_id)?;
    let leaf = store.get_active_leaf(session_id)?;
    let conversation = Conversation { meta, entries, leaf, skipped: alloc::vec::Vec::new() };
    conversation.checked().map_err(|e| {
        SessionError::storage(alloc::format!("export: session {session_id}'s tree: {e}"))
    })
}

pub fn decide(store: &dyn Store, _env: &Env<'_>, req: ExportRequest) -> Result<ExportResponse> {
    let conversation = conversation(store, &req.session_id)?;
    let bytes = req.format.write(&conversation);
    let entries = match req.format.holds_tree() {
        true => conversation.entries.len(),
        false => conversation.active_branch().len(),
    } as u64;
    let data = String::from_utf8(bytes)
        .map_err(|e| SessionError::storage(alloc::format!("export: not UTF-8: {e}")))?;
    let mut file_name = crate::jsonl::enc(&req.session_id);
    file_name.push_str(req.format.extension());
    Ok(ExportResponse { session_id: req.session_id, format: req.format, data, file_name, entries })
}

//! `session::append-many`: append a chain of messages in one change set; fires one
//! `session::message-added` per entry, in order. Not idempotent.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::append::message_added;
use super::{require_meta, Plan};
use crate::env::Env;
use crate::error::{ErrorCode, Result, SessionError};
use crate::events::Emitted;
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{AppendManyRequest, AppendManyResponse, SessionEntry};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: AppendManyRequest,
) -> Result<Plan<AppendManyResponse>> {
    let sid = req.session_id;
    let mut meta = require_meta(view)?;
    if req.messages.is_empty() {
        return Err(SessionError::new(ErrorCode::EmptyBatch, "messages must not be empty"));
    }
    let mut parent = match req.parent_id {
        Some(parent) => {
            if view.entry(&parent)?.is_none() {
                return Err(SessionError::new(
                    ErrorCode::ParentNotFound,
                    format!("parent {parent} does not exist in session {sid}"),
                ));
            }
            Some(parent)
        }
        None => view.active_leaf()?,
    };
    let now = env.clock.now_ms();
    let mut changes = ChangeSet::new(sid.clone());
    let mut entries = Vec::with_capacity(req.messages.len());
    for message in req.messages {
        let id = super::fresh_entry_id(view, env)?;
        let entry = SessionEntry::Message {
            id: id.clone(),
            parent_id: parent.replace(id),
            timestamp: now,
            revision: 0,
            origin: req.origin.clone(),
            message,
        };
        changes.push(Write::PutEntry(entry.clone()));
        entries.push(entry);
    }
    let entry_ids: Vec<String> = entries.iter().map(|e| String::from(e.id())).collect();
    let last_entry_id = entry_ids.last().cloned().unwrap_or_default();
    meta.message_count += entries.len() as u64;
    meta.updated_at = now;
    changes.push(Write::SetActiveLeaf(last_entry_id.clone()));
    changes.push(Write::PutMeta(meta.clone()));
    let events = entries.iter().map(|e| Emitted::new(message_added(&sid, e, now), &meta)).collect();
    Ok(Plan::write(changes, AppendManyResponse { entry_ids, last_entry_id }, events))
}

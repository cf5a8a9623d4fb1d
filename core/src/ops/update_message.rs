//! `session::update-message`: replace a message's content (optimistic concurrency on
//! `revision`); fires `session::message-updated`.

use alloc::format;
use alloc::vec;

use super::{require_entry, require_meta, Plan};
use crate::env::Env;
use crate::error::{ErrorCode, Result, SessionError};
use crate::events::{Emitted, SessionEvent};
use crate::store::{ChangeSet, Store, Write};
use crate::wire::{
    AgentMessage, MessageUpdatedEvent, SessionEntry, UpdateMessageRequest, UpdateMessageResponse,
};

pub fn decide(
    store: &dyn Store,
    env: &Env<'_>,
    req: UpdateMessageRequest,
) -> Result<Plan<UpdateMessageResponse>> {
    let sid = req.session_id;
    let mut meta = require_meta(store, &sid)?;
    let mut entry = require_entry(store, &sid, &req.entry_id)?;
    let SessionEntry::Message { message, revision, .. } = &mut entry else {
        return Err(SessionError::new(
            ErrorCode::InvalidEntryKind,
            format!("entry {} is a custom entry, not a message", req.entry_id),
        ));
    };
    if req.expected_revision.is_some_and(|expected| expected != *revision) {
        return Ok(Plan::read(UpdateMessageResponse { updated: false, revision: *revision }));
    }
    *message.content_mut() = req.content;
    if let Some(new_usage) = req.usage {
        match message {
            AgentMessage::Assistant { usage, .. } => *usage = Some(new_usage),
            _ => {
                return Err(SessionError::new(
                    ErrorCode::InvalidEntryKind,
                    "usage can only be set on assistant messages",
                ))
            }
        }
    }
    if let Some(new_details) = req.details.filter(|d| !d.is_null()) {
        match message {
            AgentMessage::FunctionResult { details, .. } => *details = new_details,
            AgentMessage::Custom { details, .. } => *details = Some(new_details),
            AgentMessage::User { .. } | AgentMessage::Assistant { .. } => {
                return Err(SessionError::new(
                    ErrorCode::DetailsNotSupported,
                    "details can only be set on function_result and custom messages",
                ))
            }
        }
    }
    *revision += 1;
    let new_revision = *revision;
    let now = env.clock.now_ms();
    let event = SessionEvent::MessageUpdated(MessageUpdatedEvent {
        session_id: sid.clone(),
        entry_id: req.entry_id,
        message: message.clone(),
        revision: new_revision,
        origin: req.origin,
        timestamp: now,
    });
    meta.updated_at = now;
    let events = vec![Emitted::new(event, &meta)];
    let changes = ChangeSet::new(sid).with(Write::PutEntry(entry)).with(Write::PutMeta(meta));
    Ok(Plan::write(
        changes,
        UpdateMessageResponse { updated: true, revision: new_revision },
        events,
    ))
}

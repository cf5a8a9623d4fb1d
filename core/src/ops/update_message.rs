//! `session::update-message`: replace a message's content (optimistic concurrency on
//! `revision`); fires `session::message-updated`.

use alloc::format;
use alloc::vec;

use super::{require_entry, require_meta, Plan};
use crate::env::Env;
use crate::error::{ErrorCode, Result, SessionError};
use crate::events::{Emitted, SessionEvent};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{
    AgentMessage, MessageUpdatedEvent, SessionEntry, SessionMeta, UpdateMessageRequest,
    UpdateMessageResponse,
};

/// A message entry opened for a content change, or the revision a stale writer missed.
// Returned once per call and taken apart at once: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Opened {
    Message {
        meta: SessionMeta,
        entry: SessionEntry,
    },
    /// `expected_revision` did not match: nothing is written, `{updated: false, revision}`.
    Stale {
        revision: u64,
    },
}

/// The rules every content change of a message shares (update-message, append-delta): the
/// session and the entry exist (`session/not_found`, `session/entry_not_found`), the entry is a
/// message (`session/invalid_entry_kind`), and `expected_revision`, when given, matches.
pub fn open_message(
    view: &dyn SessionView,
    entry_id: &str,
    expected_revision: Option<u64>,
) -> Result<Opened> {
    let meta = require_meta(view)?;
    let entry = require_entry(view, entry_id)?;
    let revision = match &entry {
        SessionEntry::Message { revision, .. } => *revision,
        SessionEntry::Custom { .. } => {
            return Err(SessionError::new(
                ErrorCode::InvalidEntryKind,
                format!("entry {entry_id} is a custom entry, not a message"),
            ))
        }
    };
    if expected_revision.is_some_and(|expected| expected != revision) {
        return Ok(Opened::Stale { revision });
    }
    Ok(Opened::Message { meta, entry })
}

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: UpdateMessageRequest,
) -> Result<Plan<UpdateMessageResponse>> {
    let sid = req.session_id;
    let (mut meta, mut entry) = match open_message(view, &req.entry_id, req.expected_revision)? {
        Opened::Message { meta, entry } => (meta, entry),
        Opened::Stale { revision } => {
            return Ok(Plan::no_write(UpdateMessageResponse { updated: false, revision }))
        }
    };
    let SessionEntry::Message { message, revision, .. } = &mut entry else {
        unreachable!("open_message returns message entries")
    };
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

//! `session::append`: add one entry (idempotent on `entry_id`) through the store's authoritative
//! commit; fires `session::message-added` only when the commit happened.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::{require_meta, Finish, Outcome, Plan};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::events::Emitted;
use crate::feed::PendingChange;
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{AppendRequest, AppendResponse, SessionEntry};

pub use crate::events::message_added;

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: AppendRequest,
) -> Result<Plan<AppendResponse>> {
    let sid = req.session_id;
    require_meta(view)?;
    if req.message.is_some() == req.custom.is_some() {
        return Err(SessionError::invalid_request(
            "exactly one of `message` or `custom` must be supplied",
        ));
    }
    let parent_explicit = req.parent_id.is_some();
    let existing = match &req.entry_id {
        Some(id) => view.entry(id)?,
        None => None,
    };
    let entry = match existing {
        Some(entry) => entry,
        None => {
            let parent_id = match req.parent_id {
                Some(parent) => {
                    if view.entry(&parent)?.is_none() {
                        return Err(SessionError::new(
                            crate::error::ErrorCode::ParentNotFound,
                            format!("parent {parent} does not exist in session {sid}"),
                        ));
                    }
                    Some(parent)
                }
                None => view.active_leaf()?,
            };
            let id = match req.entry_id {
                Some(id) => id,
                None => super::fresh_entry_id(view, env)?,
            };
            let timestamp = env.clock.now_ms();
            match (req.message, req.custom) {
                (Some(message), _) => SessionEntry::Message {
                    id,
                    parent_id,
                    timestamp,
                    revision: 0,
                    origin: req.origin,
                    message,
                },
                (None, Some(custom)) => SessionEntry::Custom {
                    id,
                    parent_id,
                    timestamp,
                    revision: 0,
                    origin: req.origin,
                    custom_type: custom.custom_type,
                    data: custom.data,
                },
                (None, None) => unreachable!("checked above"),
            }
        }
    };
    let changes = ChangeSet::new(sid.clone())
        .with(Write::CommitAppend { entry, parent_explicit })
        .with(env.feed_write(alloc::vec![PendingChange::CommittedAppend]));
    let finish = Finish::after_apply(move |applied| {
        let commit = applied
            .commit
            .ok_or_else(|| SessionError::storage("store did not report the append commit"))?;
        let entry = commit.entry;
        let response = AppendResponse {
            entry_id: entry.id().into(),
            parent_id: entry.parent_id().map(Into::into),
            timestamp: entry.timestamp(),
        };
        let events: Vec<Emitted> = if commit.committed {
            vec![Emitted::new(message_added(&sid, &entry, entry.timestamp()), &commit.meta)]
        } else {
            Vec::new()
        };
        Ok(Outcome { response, events })
    });
    Ok(Plan { changes: Some(changes), finish })
}

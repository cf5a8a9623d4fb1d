//! `session::append-delta` (extension): add streamed text to a message's last text or thinking
//! block in O(delta) — one small log record and one compact `session::message-delta` change — while
//! seed subscribers still get the full `session::message-updated`.

use alloc::vec;

use super::update_message::{open_message, Opened};
use super::Plan;
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::events::{Emitted, SessionEvent};
use crate::feed::PendingChange;
use crate::record::{add_delta, delta_block_index};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{
    AppendDeltaRequest, AppendDeltaResponse, MessageDelta, MessageUpdatedEvent, SessionEntry,
};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: AppendDeltaRequest,
) -> Result<Plan<AppendDeltaResponse>> {
    let thinking = match (&req.text, &req.thinking) {
        (Some(_), None) => false,
        (None, Some(_)) => true,
        _ => {
            return Err(SessionError::invalid_request(
                "exactly one of `text` or `thinking` must be supplied",
            ))
        }
    };
    let sid = req.session_id;
    let (mut meta, mut entry) = match open_message(view, &req.entry_id, req.expected_revision)? {
        Opened::Message { meta, entry } => (meta, entry),
        Opened::Stale { revision } => {
            return Ok(Plan::no_write(AppendDeltaResponse { updated: false, revision }))
        }
    };
    let SessionEntry::Message { message, revision, .. } = &mut entry else {
        unreachable!("open_message returns message entries")
    };
    let delta = MessageDelta {
        session_id: sid.clone(),
        entry_id: req.entry_id.clone(),
        revision: *revision + 1,
        block_index: delta_block_index(message.content(), thinking),
        text: req.text,
        thinking: req.thinking,
    };
    add_delta(message.content_mut(), &delta).map_err(SessionError::invalid_request)?;
    let now = env.clock.now_ms();
    meta.updated_at = now;
    let event = SessionEvent::MessageUpdated(MessageUpdatedEvent {
        session_id: sid.clone(),
        entry_id: req.entry_id,
        message: message.clone(),
        revision: delta.revision,
        origin: req.origin,
        timestamp: now,
    });
    let response = AppendDeltaResponse { updated: true, revision: delta.revision };
    let changes = ChangeSet::new(sid)
        .with(Write::AppendDelta { delta, at: now })
        .with(env.feed_write(vec![PendingChange::AppliedDelta]));
    Ok(Plan::write(changes, response, vec![Emitted::new(event, &meta)]))
}

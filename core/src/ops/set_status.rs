//! `session::set-status`: move the lifecycle status (reason kept on working/done/error, cleared on
//! idle); fires `session::status-changed` unless nothing changed.

use alloc::vec;

use super::{require_meta, Plan};
use crate::env::Env;
use crate::error::Result;
use crate::events::{Emitted, SessionEvent};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{SessionStatus, SetStatusRequest, SetStatusResponse, StatusChangedEvent};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: SetStatusRequest,
) -> Result<Plan<SetStatusResponse>> {
    let mut meta = require_meta(view)?;
    let new_reason = match req.status {
        SessionStatus::Idle => None,
        _ => req.reason,
    };
    let previous = meta.status;
    if previous == req.status && meta.status_reason == new_reason {
        return Ok(Plan::no_write(SetStatusResponse {
            status: previous,
            previous_status: previous,
        }));
    }
    let now = env.clock.now_ms();
    meta.status = req.status;
    meta.status_reason = new_reason;
    meta.updated_at = now;
    let event = SessionEvent::StatusChanged(StatusChangedEvent {
        session_id: meta.session_id.clone(),
        status: req.status,
        previous_status: previous,
        status_reason: meta.status_reason.clone(),
        timestamp: now,
    });
    let events = vec![Emitted::new(event, &meta)];
    let changes = ChangeSet::new(req.session_id).with(Write::PutMeta(meta));
    Ok(Plan::write(
        changes,
        SetStatusResponse { status: req.status, previous_status: previous },
        events,
    ))
}

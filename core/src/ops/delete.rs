//! `session::delete`: remove entries, leaf, attachments and meta; fires `session::deleted`
//! filtered on the metadata as it was before deletion.

use alloc::vec;

use super::Plan;
use crate::env::Env;
use crate::error::Result;
use crate::events::{Emitted, SessionEvent};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{DeleteRequest, DeleteResponse, DeletedEvent};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: DeleteRequest,
) -> Result<Plan<DeleteResponse>> {
    let Some(meta) = view.meta()? else {
        return Ok(Plan::no_write(DeleteResponse { deleted: false }));
    };
    let event = SessionEvent::Deleted(DeletedEvent {
        session_id: req.session_id.clone(),
        timestamp: env.clock.now_ms(),
    });
    let changes = deletion(req.session_id);
    Ok(Plan::write(changes, DeleteResponse { deleted: true }, vec![Emitted::new(event, &meta)]))
}

/// The writes that remove a session with everything it holds (its lifecycle too).
pub fn deletion(session_id: impl Into<alloc::string::String>) -> ChangeSet {
    ChangeSet::new(session_id)
        .with(Write::DeleteEntries)
        .with(Write::DeleteActiveLeaf)
        .with(Write::DeleteAttachments)
        .with(Write::DeleteMeta)
}

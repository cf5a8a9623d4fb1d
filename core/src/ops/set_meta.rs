//! `session::set-meta`: replace title / description / metadata; fires `session::meta-updated`.

use alloc::vec;

use super::{require_meta, Plan};
use crate::env::Env;
use crate::error::Result;
use crate::events::{Emitted, SessionEvent};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{MetaUpdatedEvent, SetMetaRequest, SetMetaResponse};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: SetMetaRequest,
) -> Result<Plan<SetMetaResponse>> {
    let mut meta = require_meta(view)?;
    if req.title.is_none() && req.description.is_none() && req.metadata.is_none() {
        return Ok(Plan::no_write(SetMetaResponse { meta }));
    }
    if let Some(title) = req.title {
        meta.title = title;
    }
    if let Some(description) = req.description {
        meta.description = description;
    }
    if let Some(metadata) = req.metadata {
        meta.metadata = Some(metadata);
    }
    let now = env.clock.now_ms();
    meta.updated_at = now;
    let event = SessionEvent::MetaUpdated(MetaUpdatedEvent {
        session_id: meta.session_id.clone(),
        title: meta.title.clone(),
        description: meta.description.clone(),
        metadata: meta.metadata.clone(),
        timestamp: now,
    });
    let events = vec![Emitted::new(event, &meta)];
    let changes = ChangeSet::new(req.session_id).with(Write::PutMeta(meta.clone()));
    Ok(Plan::write(changes, SetMetaResponse { meta }, events))
}

//! `session::create`: a new idle session with a fresh id; fires `session::created`.

use alloc::string::String;
use alloc::vec;

use super::Plan;
use crate::env::Env;
use crate::error::Result;
use crate::events::{Emitted, SessionEvent};
use crate::store::{ChangeSet, Store, Write};
use crate::wire::{
    CreateRequest, CreateResponse, CreatedEvent, Object, SessionKind, SessionMeta, SessionStatus,
};

/// The fields a new session starts from (shared by create, ensure and fork).
#[derive(Debug, Default)]
pub struct NewSession {
    pub title: Option<String>,
    pub description: Option<String>,
    pub metadata: Option<Object>,
    pub kind: Option<SessionKind>,
}

/// The meta of a session created `now`: idle, empty, `created_at == updated_at`.
pub fn new_meta(session_id: String, fields: NewSession, now: i64) -> SessionMeta {
    SessionMeta {
        session_id,
        title: fields.title.unwrap_or_default(),
        description: fields.description.unwrap_or_default(),
        status: SessionStatus::Idle,
        status_reason: None,
        kind: fields.kind.unwrap_or_default(),
        metadata: fields.metadata,
        forked_from: None,
        draft: None,
        draft_attachments: None,
        created_at: now,
        updated_at: now,
        message_count: 0,
    }
}

/// The `session::created` event of a meta, filtered on its own metadata.
pub fn created_event(meta: &SessionMeta) -> Emitted {
    let event = SessionEvent::Created(CreatedEvent {
        session_id: meta.session_id.clone(),
        title: meta.title.clone(),
        description: meta.description.clone(),
        status: meta.status,
        forked_from: meta.forked_from.clone(),
        created_at: meta.created_at,
    });
    Emitted::new(event, meta)
}

pub fn decide(
    _store: &dyn Store,
    env: &Env<'_>,
    req: CreateRequest,
) -> Result<Plan<CreateResponse>> {
    let fields = NewSession {
        title: req.title,
        description: req.description,
        metadata: req.metadata,
        kind: req.kind,
    };
    let meta = new_meta(env.ids.session_id(), fields, env.clock.now_ms());
    let changes = ChangeSet::new(meta.session_id.clone()).with(Write::PutMeta(meta.clone()));
    let events = vec![created_event(&meta)];
    Ok(Plan::write(changes, CreateResponse { session_id: meta.session_id.clone(), meta }, events))
}

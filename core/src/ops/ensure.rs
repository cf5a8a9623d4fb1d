//! `session::ensure`: create a session under a caller-chosen id unless it exists (idempotent).

use alloc::vec;

use super::create::{created_event, new_meta, NewSession};
use super::Plan;
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{EnsureRequest, EnsureResponse};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: EnsureRequest,
) -> Result<Plan<EnsureResponse>> {
    if req.session_id.is_empty() {
        return Err(SessionError::invalid_request("session_id must not be empty"));
    }
    if let Some(meta) = view.meta()? {
        return Ok(Plan::no_write(EnsureResponse {
            session_id: req.session_id,
            meta,
            created: false,
        }));
    }
    super::trash::refuse_trashed(view)?;
    let fields = NewSession {
        title: req.title,
        description: req.description,
        metadata: req.metadata,
        kind: req.kind,
    };
    let meta = new_meta(req.session_id.clone(), fields, env.clock.now_ms());
    let changes = ChangeSet::new(req.session_id.clone()).with(Write::PutMeta(meta.clone()));
    let events = vec![created_event(&meta)];
    let response = EnsureResponse { session_id: req.session_id, meta, created: true };
    Ok(Plan::write(changes, response, events))
}

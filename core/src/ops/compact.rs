//! `session::compact` (extension, issue 38): appends a compaction record — a plain `custom`
//! entry of type `compaction`, so v1.0.32 replays it — after checking that its
//! `first_kept_entry_id` is on the path to the new record and that the cut keeps every function
//! call with its result. Otherwise `session::append`'s rules, answer and event.

use serde_json::{json, Map, Value};

use super::{append, require_meta, Plan};
use crate::compaction::{cut_at, COMPACTION};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::store::SessionView;
use crate::wire::{AppendRequest, AppendResponse, CompactRequest, CustomPayload};

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: CompactRequest,
) -> Result<Plan<AppendResponse>> {
    require_meta(view)?;
    let replay = match &req.entry_id {
        Some(id) => view.entry(id)?.is_some(),
        None => false,
    };
    // A replayed id answers as `append` does; an unknown explicit parent fails there too.
    let parent = match &req.parent_id {
        Some(parent) => view.entry(parent)?.map(|e| e.id().into()),
        None => view.active_leaf()?,
    };
    if !replay && (req.parent_id.is_none() || parent.is_some()) {
        let before = match &parent {
            Some(leaf) => view.path_to(leaf)?,
            None => alloc::vec::Vec::new(),
        };
        cut_at(&before, &req.first_kept_entry_id).map_err(SessionError::invalid_request)?;
    }
    let mut data = Map::new();
    data.insert("summary".into(), Value::String(req.summary));
    data.insert("first_kept_entry_id".into(), Value::String(req.first_kept_entry_id));
    if let Some(tokens) = req.tokens_before {
        data.insert("tokens_before".into(), json!(tokens));
    }
    if let Some(details) = req.details {
        data.insert("details".into(), details);
    }
    let custom = CustomPayload { custom_type: COMPACTION.into(), data: Value::Object(data) };
    let append = AppendRequest {
        session_id: req.session_id,
        message: None,
        custom: Some(custom),
        parent_id: req.parent_id,
        entry_id: req.entry_id,
        origin: req.origin,
    };
    append::decide(view, env, append)
}

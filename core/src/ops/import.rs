//! `session::import` (extension, issue 40): one file of another agent's format
//! ([`crate::formats`]) becomes one session, in one transaction on its id. A rerun finds the
//! session unchanged and writes nothing; a stored session of that id with other content is left
//! alone unless `replace`, which deletes it and stores the file's in the same change set. Fires
//! `session::created` (after `session::deleted` for a replaced one), as `session::fork` does: the
//! entries arrive whole, not as messages added one by one.

use alloc::format;
use alloc::vec::Vec;

use super::create::created_event;
use super::{transact, Outcome, Plan};
use crate::catalog::clip;
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::formats::{self, Conversation, Source};
use crate::jsonl::enc_len;
use crate::limits::MAX_ID_BYTES;
use crate::store::{ChangeSet, SessionView, Store, Write};
use crate::wire::{ImportOutcome, ImportRequest, ImportResponse, SessionEntry};

/// Reads the request's file into the conversation it imports (pure: no store involved).
pub fn conversation(env: &Env<'_>, req: &ImportRequest) -> Result<Conversation> {
    let name = req.file_name.as_deref().unwrap_or("import");
    let source = Source {
        name,
        bytes: req.data.as_bytes(),
        modified: req.modified.unwrap_or_else(|| env.clock.now_ms()),
    };
    let mut conversation = formats::read(req.format, &source).map_err(|e| {
        SessionError::invalid_request(format!("import: {} file {}: {e}", req.format, clip(name)))
    })?;
    if let Some(extra) = &req.metadata {
        let metadata = conversation.meta.metadata.get_or_insert_with(Default::default);
        metadata.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    check_ids(&conversation)?;
    Ok(conversation)
}

/// Every id within the store's limit (a format may carry ids of any length).
fn check_ids(conversation: &Conversation) -> Result<()> {
    let too_long = |what: &str, id: &str| {
        SessionError::invalid_request(format!(
            "import: {what} {:?} is too long: {} bytes file-name encoded, the limit is {MAX_ID_BYTES}",
            clip(id),
            enc_len(id)
        ))
    };
    if conversation.meta.session_id.is_empty() {
        return Err(SessionError::invalid_request("import: the file names an empty session id"));
    }
    if enc_len(&conversation.meta.session_id) > MAX_ID_BYTES {
        return Err(too_long("session id", &conversation.meta.session_id));
    }
    match conversation.entries.iter().find(|e| enc_len(e.id()) > MAX_ID_BYTES) {
        Some(entry) => Err(too_long("entry id", entry.id())),
        None => Ok(()),
    }
}

/// The whole call: the file read, then its session stored in one transaction.
pub fn run(
    store: &dyn Store,
    env: &Env<'_>,
    req: ImportRequest,
) -> Result<Outcome<ImportResponse>> {
    let conversation = conversation(env, &req)?;
    store_conversation(store, env, &conversation, req.replace)
}

/// Stores `conversation` as its session (one transaction on its id).
pub fn store_conversation(
    store: &dyn Store,
    env: &Env<'_>,
    conversation: &Conversation,
    replace: bool,
) -> Result<Outcome<ImportResponse>> {
    let sid = conversation.meta.session_id.clone();
    let outcome = transact(store, env, &sid, |view, env| decide(view, env, conversation, replace))?;
    let response = serde_json::from_value(outcome.0.response)
        .map_err(|e| SessionError::storage(format!("import response: {e}")))?;
    Ok(Outcome { response, events: outcome.0.events })
}

/// Whether the session `view` holds is `conversation` exactly.
fn holds(view: &dyn SessionView, conversation: &Conversation) -> Result<bool> {
    if view.meta()?.as_ref() != Some(&conversation.meta) || view.active_leaf()? != conversation.leaf
    {
        return Ok(false);
    }
    let mut stored = view.entries()?;
    let mut wanted: Vec<&SessionEntry> = conversation.entries.iter().collect();
    stored.sort_by(|a, b| a.id().cmp(b.id()));
    wanted.sort_by(|a, b| a.id().cmp(b.id()));
    Ok(stored.len() == wanted.len() && stored.iter().zip(wanted).all(|(a, b)| a == b))
}

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    conversation: &Conversation,
    replace: bool,
) -> Result<Plan<ImportResponse>> {
    let response = |outcome| ImportResponse {
        session_id: conversation.meta.session_id.clone(),
        outcome,
        entries: conversation.entries.len() as u64,
        skipped: conversation.skipped.clone(),
    };
    let stored = view.meta()?;
    if stored.is_some() && holds(view, conversation)? {
        return Ok(Plan::no_write(response(ImportOutcome::Unchanged)));
    }
    let removal = super::sweep::removal(view, env)?;
    if removal.is_some() && !replace {
        return Ok(Plan::no_write(response(ImportOutcome::Exists)));
    }
    let outcome = match removal {
        Some(_) => ImportOutcome::Replaced,
        None => ImportOutcome::Created,
    };
    let (mut changes, mut events) = removal
        .unwrap_or_else(|| (ChangeSet::new(conversation.meta.session_id.clone()), Vec::new()));
    for entry in &conversation.entries {
        changes.push(Write::PutEntry(entry.clone()));
    }
    if let Some(leaf) = &conversation.leaf {
        changes.push(Write::SetActiveLeaf(leaf.clone()));
    }
    changes.push(Write::PutMeta(conversation.meta.clone()));
    events.push(created_event(&conversation.meta));
    Ok(Plan::write(changes, response(outcome), events))
}

//! `session::erase` (extension): every session a `session_id` or a `metadata` filter names is
//! deleted, each in its own transaction (so an interrupted erase resumes where it stopped: the
//! sessions left still match), then the store removes what it holds of them elsewhere
//! ([`Store::erase_traces`]). Each fires `session::deleted`. The CLI form runs the same steps
//! with a progress bar ([`matching`], [`one`], [`Store::erase_traces`]).

use alloc::string::String;
use alloc::vec::Vec;

use super::{sweep, transact, Outcome};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::filter::metadata_matches;
use crate::store::Store;
use crate::wire::{EraseRequest, EraseResponse};

/// The sessions `req` names, in id order; refuses a request that names none clearly.
pub fn matching(store: &dyn Store, req: &EraseRequest) -> Result<Vec<String>> {
    let filter = req.metadata.as_ref().filter(|m| !m.is_empty());
    match (&req.session_id, filter) {
        (Some(_), _) if req.metadata.is_some() || req.all => Err(SessionError::invalid_request(
            "erase: give session_id alone, or a metadata filter (all: true for every session)",
        )),
        (Some(sid), _) => {
            Ok(match store.get_meta(sid)?.is_some() || super::trash::is_trashed(store, sid)? {
                true => alloc::vec![sid.clone()],
                false => Vec::new(),
            })
        }
        (None, None) if !req.all => Err(SessionError::invalid_request(
            "erase: an empty filter names every session; give all: true to erase them all",
        )),
        (None, filter) => {
            // The live sessions and the trashed ones (their meta as it was).
            let mut metas = store.list_metas()?;
            metas.extend(trashed_metas(store)?);
            let mut ids: Vec<String> = metas
                .into_iter()
                .filter(|m| filter.is_none_or(|f| metadata_matches(f, m.metadata.as_ref())))
                .map(|m| m.session_id)
                .collect();
            ids.sort_unstable();
            ids.dedup();
            Ok(ids)
        }
    }
}

/// The metas of the trashed sessions; none where the store keeps no lifecycle.
fn trashed_metas(store: &dyn Store) -> Result<Vec<crate::wire::SessionMeta>> {
    match store.list_lifecycles() {
        Ok(all) => Ok(all.into_iter().filter_map(|(_, l)| l.trashed.map(|t| t.meta)).collect()),
        Err(crate::StoreError::Unsupported(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Erases one session, live or trashed (its removal, one transaction): whether there was one,
/// with the `session::deleted` of a live one, and the bytes it held (its meta and entries as JSON, its attachments' bytes).
pub fn one(store: &dyn Store, env: &Env<'_>, session_id: &str) -> Result<(Outcome<bool>, u64)> {
    let bytes = held_bytes(store, session_id)?;
    let removed = transact(store, env, session_id, sweep::remove)?.0;
    let found = removed.response == serde_json::Value::Bool(true);
    Ok((removed.map(|_| found), if found { bytes } else { 0 }))
}

/// The whole call: every matching session erased, then the store's traces of them.
pub fn run(store: &dyn Store, env: &Env<'_>, req: EraseRequest) -> Result<Outcome<EraseResponse>> {
    run_with(store, env, &req, &mut |_| {})
}

/// How far an erase is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// This many sessions match.
    Matched(usize),
    /// One more was erased.
    Erased,
}

/// [`run`], telling `progress` how far it is.
pub fn run_with(
    store: &dyn Store,
    env: &Env<'_>,
    req: &EraseRequest,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome<EraseResponse>> {
    let ids = matching(store, req)?;
    progress(Progress::Matched(ids.len()));
    let mut outcome = Outcome::silent(EraseResponse::default());
    for sid in &ids {
        let (deleted, bytes) = one(store, env, sid)?;
        outcome.response.erased += u64::from(deleted.response);
        outcome.response.bytes += bytes;
        outcome.events.extend(deleted.events);
        progress(Progress::Erased);
    }
    store.erase_traces(&ids)?;
    Ok(outcome)
}

fn held_bytes(store: &dyn Store, session_id: &str) -> Result<u64> {
    let mut bytes = 0;
    if let Some(meta) = super::trash::meta_or_trashed(store, session_id)? {
        bytes += json_len(&meta);
    }
    for entry in store.list_entries(session_id)? {
        bytes += json_len(&entry);
    }
    for attachment in store.list_attachments(session_id)? {
        bytes += json_len(&attachment) + attachment.size;
    }
    Ok(bytes)
}

fn json_len<T: serde::Serialize>(value: &T) -> u64 {
    serde_json::to_vec(value).map_or(0, |v| v.len() as u64)
}

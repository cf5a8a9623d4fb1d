//! `session::trash`, `session::restore` and `session::list-trash` (extensions): a trashed session
//! keeps everything it holds, its meta parked in its lifecycle, so no seed read or list sees it
//! until it is restored exactly as it was; the sweep purges it after `trash_retention_secs`. To
//! a subscriber of the seed's triggers, trashing is a delete (`session::deleted`) and restoring a
//! creation (`session::created`, which starts the feed's new epoch).

use alloc::vec;
use alloc::vec::Vec;

use super::create::created_event;
use super::Plan;
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::events::{Emitted, SessionEvent};
use crate::filter::metadata_matches;
use crate::lifecycle::Lifecycle;
use crate::store::{ChangeSet, SessionView, Store, Write};
use crate::wire::{
    DeletedEvent, ListTrashRequest, ListTrashResponse, RestoreRequest, RestoreResponse,
    SessionMeta, TrashRequest, TrashResponse, TrashedSession,
};

pub fn trash(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: TrashRequest,
) -> Result<Plan<TrashResponse>> {
    let Some(meta) = view.meta()? else {
        return Ok(Plan::no_write(TrashResponse { trashed: false, purge_at: None }));
    };
    let now = env.clock.now_ms();
    let purge_at = now.saturating_add(env.limits.trash_retention_ms());
    let event = SessionEvent::Deleted(DeletedEvent { session_id: req.session_id, timestamp: now });
    let changes = ChangeSet::new(view.session_id()).with(Write::Trash { at: now });
    let response = TrashResponse { trashed: true, purge_at: Some(purge_at) };
    Ok(Plan::write(changes, response, vec![Emitted::new(event, &meta)]))
}

pub fn restore(view: &dyn SessionView, req: RestoreRequest) -> Result<Plan<RestoreResponse>> {
    let unrestored = || Ok(Plan::no_write(RestoreResponse { restored: false }));
    if view.meta()?.is_some() {
        return unrestored();
    }
    let Some(trashed) = lifecycle_of(view)?.trashed else {
        return unrestored();
    };
    let changes = ChangeSet::new(req.session_id).with(Write::Restore);
    let events = vec![created_event(&trashed.meta)];
    Ok(Plan::write(changes, RestoreResponse { restored: true }, events))
}

pub fn list(store: &dyn Store, env: &Env<'_>, req: ListTrashRequest) -> Result<ListTrashResponse> {
    let retention = env.limits.trash_retention_ms();
    let filter = req.metadata.as_ref();
    let mut trashed: Vec<TrashedSession> = store
        .list_lifecycles()?
        .into_iter()
        .filter_map(|(_, lifecycle)| lifecycle.trashed)
        .filter(|t| filter.is_none_or(|f| metadata_matches(f, t.meta.metadata.as_ref())))
        .map(|t| TrashedSession {
            purge_at: t.at.saturating_add(retention),
            trashed_at: t.at,
            meta: t.meta,
        })
        .collect();
    trashed.sort_by(|a, b| {
        (b.trashed_at, &a.meta.session_id).cmp(&(a.trashed_at, &b.meta.session_id))
    });
    let total = trashed.len() as u64;
    let limit = env.limits.page_size(req.limit);
    let sessions = trashed.into_iter().skip(req.offset.unwrap_or(0)).take(limit).collect();
    Ok(ListTrashResponse { sessions, total })
}

/// The session's lifecycle; empty where the store keeps none (a bridge to a seed main), so the
/// seed's own calls (`ensure`) go on working there.
pub fn lifecycle_of(view: &dyn SessionView) -> Result<Lifecycle> {
    match view.lifecycle() {
        Ok(lifecycle) => Ok(lifecycle),
        Err(crate::StoreError::Unsupported(_)) => Ok(Lifecycle::default()),
        Err(e) => Err(SessionError::from(e)),
    }
}

/// Refuses to create a session under an id the trash holds.
pub fn refuse_trashed(view: &dyn SessionView) -> Result<()> {
    match lifecycle_of(view)?.trashed {
        Some(_) => Err(SessionError::invalid_request(alloc::format!(
            "session {} is in the trash: restore it (session::restore) or erase it first",
            view.session_id()
        ))),
        None => Ok(()),
    }
}

/// Whether `session_id` is in the trash, where a read that skips the meta (an entry or an
/// attachment by id) must not see it.
pub fn is_trashed(store: &dyn Store, session_id: &str) -> Result<bool> {
    Ok(lifecycle_of(&crate::store::StoreView { store, session_id })?.trashed.is_some())
}

/// The session's meta, or the one its trash parked: what its events' binding filters and an
/// erasure's byte count go by.
pub fn meta_or_trashed(store: &dyn Store, session_id: &str) -> Result<Option<SessionMeta>> {
    if let Some(meta) = store.get_meta(session_id)? {
        return Ok(Some(meta));
    }
    let trashed = lifecycle_of(&crate::store::StoreView { store, session_id })?.trashed;
    Ok(trashed.map(|t| t.meta))
}

//! The internal `session::store::*` protocol served by an authoritative instance: each function is
//! one raw store operation (no domain rules), plus `publish-events`, which turns a bridged
//! instance's envelopes back into events for local fan-out. Each handler takes and returns the
//! types of its [`StoreCall`], the definition a bridge's client uses too; the catalog's
//! request/response types must be the same or this does not compile.

use alloc::vec::Vec;

use super::Outcome;
use crate::error::{Result, SessionError, StoreError};
use crate::events::Emitted;
use crate::store::{ChangeSet, Store, Write};
use crate::wire::api_store::*;
use crate::wire::store_calls::*;
use crate::wire::StoreListPage;

fn apply_one(store: &dyn Store, session_id: &str, write: Write) -> Result<OkResponse> {
    store.apply(&ChangeSet::new(session_id).with(write))?;
    Ok(OkResponse::OK)
}

pub fn get_meta(store: &dyn Store, req: Req<GetMeta>) -> Result<Resp<GetMeta>> {
    Ok(store.get_meta(&req.session_id)?)
}

pub fn put_meta(store: &dyn Store, req: Req<PutMeta>) -> Result<Resp<PutMeta>> {
    let sid = req.meta.session_id.clone();
    apply_one(store, &sid, Write::PutMeta(req.meta))
}

pub fn delete_meta(store: &dyn Store, req: Req<DeleteMeta>) -> Result<Resp<DeleteMeta>> {
    apply_one(store, &req.session_id, Write::DeleteMeta)
}

pub fn list_metas(store: &dyn Store, _req: Req<ListMetas>) -> Result<Resp<ListMetas>> {
    Ok(ListMetasResponse { metas: store.list_metas()? })
}

pub fn get_entry(store: &dyn Store, req: Req<GetEntry>) -> Result<Resp<GetEntry>> {
    Ok(store.get_entry(&req.session_id, &req.entry_id)?)
}

pub fn put_entry(store: &dyn Store, req: Req<PutEntry>) -> Result<Resp<PutEntry>> {
    apply_one(store, &req.session_id, Write::PutEntry(req.entry))
}

pub fn list_entries(store: &dyn Store, req: Req<ListEntries>) -> Result<Resp<ListEntries>> {
    Ok(ListEntriesResponse { entries: store.list_entries(&req.session_id)? })
}

pub fn delete_entries(store: &dyn Store, req: Req<DeleteEntries>) -> Result<Resp<DeleteEntries>> {
    apply_one(store, &req.session_id, Write::DeleteEntries)
}

pub fn get_active_leaf(store: &dyn Store, req: Req<GetActiveLeaf>) -> Result<Resp<GetActiveLeaf>> {
    Ok(ActiveLeafResponse { entry_id: store.get_active_leaf(&req.session_id)? })
}

pub fn set_active_leaf(store: &dyn Store, req: Req<SetActiveLeaf>) -> Result<Resp<SetActiveLeaf>> {
    apply_one(store, &req.session_id, Write::SetActiveLeaf(req.entry_id))
}

pub fn delete_active_leaf(
    store: &dyn Store,
    req: Req<DeleteActiveLeaf>,
) -> Result<Resp<DeleteActiveLeaf>> {
    apply_one(store, &req.session_id, Write::DeleteActiveLeaf)
}

pub fn commit_append(store: &dyn Store, req: Req<CommitAppend>) -> Result<Resp<CommitAppend>> {
    let changes = ChangeSet::new(req.session_id.clone())
        .with(Write::CommitAppend { entry: req.entry, parent_explicit: req.parent_explicit });
    let outcome = store
        .apply(&changes)?
        .commit
        .ok_or_else(|| SessionError::storage("store did not report the append commit"))?;
    Ok(outcome.into())
}

pub fn put_attachment(store: &dyn Store, req: Req<PutAttachment>) -> Result<Resp<PutAttachment>> {
    let bytes = req.bytes().map_err(|e| {
        SessionError::invalid_request(alloc::format!("data is not valid base64: {e}"))
    })?;
    let sid = req.meta.session_id.clone();
    apply_one(store, &sid, Write::PutAttachment { meta: req.meta, bytes })
}

pub fn get_attachment(store: &dyn Store, req: Req<GetAttachment>) -> Result<Resp<GetAttachment>> {
    Ok(store
        .get_attachment(&req.session_id, &req.attachment_id)?
        .map(|(meta, bytes)| StoredAttachment::new(meta, &bytes)))
}

pub fn list_attachments(
    store: &dyn Store,
    req: Req<ListAttachments>,
) -> Result<Resp<ListAttachments>> {
    Ok(ListAttachmentsResponse { attachments: store.list_attachments(&req.session_id)? })
}

pub fn delete_attachment(
    store: &dyn Store,
    req: Req<DeleteAttachment>,
) -> Result<Resp<DeleteAttachment>> {
    let changes = ChangeSet::new(req.session_id).with(Write::DeleteAttachment(req.attachment_id));
    let deleted = store.apply(&changes)?.attachments_deleted.first().copied().unwrap_or(false);
    Ok(DeletedResponse { deleted })
}

pub fn delete_attachments(
    store: &dyn Store,
    req: Req<DeleteAttachments>,
) -> Result<Resp<DeleteAttachments>> {
    apply_one(store, &req.session_id, Write::DeleteAttachments)
}

/// Parses envelopes; malformed ones are skipped and not counted. The events are for the host to
/// deliver to local bindings and forward to attached bridges.
pub fn publish_events(req: Req<PublishEvents>) -> Outcome<Resp<PublishEvents>> {
    let events: Vec<Emitted> = req.events.iter().filter_map(Emitted::from_envelope).collect();
    Outcome { response: PublishEventsResponse { published: events.len() }, events }
}

/// `session::store::apply` (extension): the whole change set in one atomic `Store::apply`.
pub fn apply(store: &dyn Store, req: Req<Apply>) -> Result<Resp<Apply>> {
    let changes =
        req.into_change_set().map_err(|e| SessionError::invalid_request(alloc::format!("{e}")))?;
    Ok(store.apply(&changes)?.into())
}

/// `session::store::changes` (extension): one page of the main's feed of a session.
pub fn changes(store: &dyn Store, req: Req<Changes>) -> Result<Resp<Changes>> {
    Ok(store.changes(&req.session_id, req.after_seq, req.limit)?)
}

/// `session::store::path-locate` (extension): [`Store::path_locate`] of the main.
pub fn path_locate(store: &dyn Store, req: Req<PathLocate>) -> Result<Resp<PathLocate>> {
    let located = store.path_locate(&req.session_id, &req.leaf, req.entry_id.as_deref());
    Ok(located.map_err(|e| unknown_leaf_or(store, &req.session_id, &req.leaf, e))?.into())
}

/// A path read's failure as the caller should see it: a `leaf` that is not an entry of the
/// session is the caller's mistake (`session/entry_not_found`), not a broken chain in storage.
fn unknown_leaf_or(store: &dyn Store, sid: &str, leaf: &str, e: StoreError) -> SessionError {
    match store.get_entry(sid, leaf) {
        Ok(None) => SessionError::entry_not_found(sid, leaf),
        _ => e.into(),
    }
}

/// `session::store::path-select` (extension): [`Store::path_select`] of the main.
pub fn path_select(store: &dyn Store, req: Req<PathSelect>) -> Result<Resp<PathSelect>> {
    let selected = store.path_select(&req.session_id, &req.leaf, &req.query());
    Ok(selected.map_err(|e| unknown_leaf_or(store, &req.session_id, &req.leaf, e))?.into())
}

/// `session::store::list-page` (extension): [`Store::list_page`] of the main.
pub fn list_page(store: &dyn Store, req: Req<ListPage>) -> Result<Resp<ListPage>> {
    Ok(StoreListPage { sessions: store.list_page(&req.query())? })
}

/// `session::store::lifecycles` (extension): [`Store::lifecycle`] of one session of the main, or
/// [`Store::list_lifecycles`].
pub fn lifecycles(store: &dyn Store, req: Req<Lifecycles>) -> Result<Resp<Lifecycles>> {
    let lifecycles = match req.session_id {
        Some(sid) => {
            let lifecycle = store.lifecycle(&sid)?;
            let one = (!lifecycle.is_empty()).then_some((sid, lifecycle));
            one.into_iter().collect()
        }
        None => store.list_lifecycles()?,
    };
    let lifecycles = lifecycles
        .into_iter()
        .map(|(session_id, lifecycle)| crate::wire::StoredLifecycle { session_id, lifecycle })
        .collect();
    Ok(crate::wire::StoreLifecycles { lifecycles })
}

/// `session::store::usage` (extension): [`Store::usage`] of the main.
pub fn usage(store: &dyn Store, req: Req<UsageTallies>) -> Result<Resp<UsageTallies>> {
    let (branch, session) = store.usage(&req.session_id, req.leaf.as_deref())?;
    Ok(crate::wire::StoreUsage { branch, session })
}

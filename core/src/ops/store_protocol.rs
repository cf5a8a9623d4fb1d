//! The internal `session::store::*` protocol served by an authoritative instance: each function is
//! one raw store operation (no domain rules), plus `publish-events`, which turns a bridged
//! instance's envelopes back into events for local fan-out.

use alloc::vec::Vec;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::Outcome;
use crate::error::{Result, SessionError};
use crate::events::Emitted;
use crate::store::{ChangeSet, Store, Write};
use crate::wire::api_store::*;
use crate::wire::{SessionEntry, SessionMeta};

fn apply_one(store: &dyn Store, session_id: &str, write: Write) -> Result<OkResponse> {
    store.apply(&ChangeSet::new(session_id).with(write))?;
    Ok(OkResponse::OK)
}

pub fn get_meta(store: &dyn Store, req: SessionIdRequest) -> Result<Option<SessionMeta>> {
    Ok(store.get_meta(&req.session_id)?)
}

pub fn put_meta(store: &dyn Store, req: PutMetaRequest) -> Result<OkResponse> {
    let sid = req.meta.session_id.clone();
    apply_one(store, &sid, Write::PutMeta(req.meta))
}

pub fn delete_meta(store: &dyn Store, req: SessionIdRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::DeleteMeta)
}

pub fn list_metas(store: &dyn Store, _req: ListMetasRequest) -> Result<ListMetasResponse> {
    Ok(ListMetasResponse { metas: store.list_metas()? })
}

pub fn get_entry(store: &dyn Store, req: EntryIdRequest) -> Result<Option<SessionEntry>> {
    Ok(store.get_entry(&req.session_id, &req.entry_id)?)
}

pub fn put_entry(store: &dyn Store, req: PutEntryRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::PutEntry(req.entry))
}

pub fn list_entries(store: &dyn Store, req: SessionIdRequest) -> Result<ListEntriesResponse> {
    Ok(ListEntriesResponse { entries: store.list_entries(&req.session_id)? })
}

pub fn delete_entries(store: &dyn Store, req: SessionIdRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::DeleteEntries)
}

pub fn get_active_leaf(store: &dyn Store, req: SessionIdRequest) -> Result<ActiveLeafResponse> {
    Ok(ActiveLeafResponse { entry_id: store.get_active_leaf(&req.session_id)? })
}

pub fn set_active_leaf(store: &dyn Store, req: EntryIdRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::SetActiveLeaf(req.entry_id))
}

pub fn delete_active_leaf(store: &dyn Store, req: SessionIdRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::DeleteActiveLeaf)
}

pub fn commit_append(store: &dyn Store, req: CommitAppendRequest) -> Result<CommitAppendResponse> {
    let changes = ChangeSet::new(req.session_id.clone())
        .with(Write::CommitAppend { entry: req.entry, parent_explicit: req.parent_explicit });
    let outcome = store
        .apply(&changes)?
        .commit
        .ok_or_else(|| SessionError::storage("store did not report the append commit"))?;
    Ok(CommitAppendResponse {
        committed: outcome.committed,
        entry: outcome.entry,
        meta: outcome.meta,
    })
}

pub fn put_attachment(store: &dyn Store, req: PutAttachmentRequest) -> Result<OkResponse> {
    let bytes = STANDARD.decode(req.data.as_bytes()).map_err(|e| {
        SessionError::invalid_request(alloc::format!("data is not valid base64: {e}"))
    })?;
    let sid = req.meta.session_id.clone();
    apply_one(store, &sid, Write::PutAttachment { meta: req.meta, bytes })
}

pub fn get_attachment(
    store: &dyn Store,
    req: AttachmentIdRequest,
) -> Result<Option<StoredAttachment>> {
    Ok(store
        .get_attachment(&req.session_id, &req.attachment_id)?
        .map(|(meta, bytes)| StoredAttachment { meta, data: STANDARD.encode(bytes) }))
}

pub fn list_attachments(
    store: &dyn Store,
    req: SessionIdRequest,
) -> Result<ListAttachmentsResponse> {
    Ok(ListAttachmentsResponse { attachments: store.list_attachments(&req.session_id)? })
}

pub fn delete_attachment(store: &dyn Store, req: AttachmentIdRequest) -> Result<DeletedResponse> {
    let changes = ChangeSet::new(req.session_id).with(Write::DeleteAttachment(req.attachment_id));
    let deleted = store.apply(&changes)?.attachments_deleted.first().copied().unwrap_or(false);
    Ok(DeletedResponse { deleted })
}

pub fn delete_attachments(store: &dyn Store, req: SessionIdRequest) -> Result<OkResponse> {
    apply_one(store, &req.session_id, Write::DeleteAttachments)
}

/// Parses envelopes; malformed ones are skipped and not counted. The events are for the host to
/// deliver to local bindings and forward to attached bridges.
pub fn publish_events(req: PublishEventsRequest) -> Outcome<PublishEventsResponse> {
    let events: Vec<Emitted> = req.events.iter().filter_map(Emitted::from_envelope).collect();
    Outcome { response: PublishEventsResponse { published: events.len() }, events }
}

//! `BridgeStore`: the `session_core::Store` of a bridged instance. Every store operation is one
//! call of the main's `session::store::*` protocol (contract §5.6–§5.7); nothing is cached. Any
//! failure becomes a `StoreError` naming the protocol function
//! (`bridge session::store::get-meta failed: …`), which callers see as retryable
//! `session/storage`.
//!
//! Atomicity: the seed's protocol has no batch call, so [`Store::apply`] sends one protocol call
//! per write of the change set, in the change set's order, and stops at the first failure. A
//! change set with several writes (append-many, fork, update-message, delete) is therefore NOT
//! all-or-nothing through a bridge: the writes before a failure stay on the main. The operations
//! order their writes so the session meta comes last (put last on create/fork/append-many/update,
//! deleted last on delete), which keeps a partly applied change set retryable; a single-write
//! change set (create, set-*, append's commit) is as atomic as the main makes it.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use session_core::record::CommitOutcome;
use session_core::wire::api_store::{
    ActiveLeafResponse, CommitAppendResponse, DeletedResponse, ListAttachmentsResponse,
    ListEntriesResponse, ListMetasResponse, OkResponse, StoredAttachment,
};
use session_core::wire::{AttachmentMeta, SessionEntry, SessionMeta};
use session_core::{Applied, ChangeSet, Store, StoreError, Write};

use super::Transport;

/// Prefix of every protocol function id.
pub const PROTOCOL: &str = "session::store::";

/// The store of a bridged instance.
#[derive(Clone)]
pub struct BridgeStore {
    transport: Arc<dyn Transport>,
}

impl std::fmt::Debug for BridgeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BridgeStore")
    }
}

/// The error of protocol function `name`.
pub fn failure(name: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::new(format!("bridge {PROTOCOL}{name} failed: {detail}"))
}

impl BridgeStore {
    pub fn new(transport: Arc<dyn Transport>) -> Self {
        BridgeStore { transport }
    }

    /// One protocol call, its reply decoded as `R`.
    fn call<R: DeserializeOwned>(&self, name: &str, payload: Value) -> Result<R, StoreError> {
        let reply = self
            .transport
            .call(&format!("{PROTOCOL}{name}"), payload)
            .map_err(|e| failure(name, e))?;
        serde_json::from_value(reply).map_err(|e| failure(name, format!("undecodable reply: {e}")))
    }

    /// A write answering `{ok: true}`.
    fn ok(&self, name: &str, payload: Value) -> Result<(), StoreError> {
        let reply: OkResponse = self.call(name, payload)?;
        if reply.ok {
            Ok(())
        } else {
            Err(failure(name, "the main answered ok: false"))
        }
    }

    /// One write of a change set of session `sid`.
    fn write(&self, sid: &str, write: &Write, applied: &mut Applied) -> Result<(), StoreError> {
        match write {
            Write::PutMeta(meta) => self.ok("put-meta", json!({ "meta": meta })),
            Write::PutEntry(entry) => {
                self.ok("put-entry", json!({ "session_id": sid, "entry": entry }))
            }
            Write::SetActiveLeaf(id) => {
                self.ok("set-active-leaf", json!({ "session_id": sid, "entry_id": id }))
            }
            Write::CommitAppend { entry, parent_explicit } => {
                let payload = json!({
                    "session_id": sid, "entry": entry, "parent_explicit": parent_explicit,
                });
                let reply: CommitAppendResponse = self.call("commit-append", payload)?;
                applied.commit = Some(CommitOutcome {
                    committed: reply.committed,
                    entry: reply.entry,
                    meta: reply.meta,
                });
                Ok(())
            }
            Write::DeleteEntries => self.ok("delete-entries", json!({ "session_id": sid })),
            Write::DeleteActiveLeaf => self.ok("delete-active-leaf", json!({ "session_id": sid })),
            Write::DeleteMeta => self.ok("delete-meta", json!({ "session_id": sid })),
            Write::PutAttachment { meta, bytes } => {
                self.ok("put-attachment", json!({ "meta": meta, "data": STANDARD.encode(bytes) }))
            }
            Write::DeleteAttachment(id) => {
                let payload = json!({ "session_id": sid, "attachment_id": id });
                let reply: DeletedResponse = self.call("delete-attachment", payload)?;
                applied.attachments_deleted.push(reply.deleted);
                Ok(())
            }
            Write::DeleteAttachments => self.ok("delete-attachments", json!({ "session_id": sid })),
        }
    }
}

impl Store for BridgeStore {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.call("get-meta", json!({ "session_id": session_id }))
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(self.call::<ListMetasResponse>("list-metas", json!({}))?.metas)
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        self.call("get-entry", json!({ "session_id": session_id, "entry_id": entry_id }))
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let reply: ListEntriesResponse =
            self.call("list-entries", json!({ "session_id": session_id }))?;
        Ok(reply.entries)
    }

    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        let reply: ActiveLeafResponse =
            self.call("get-active-leaf", json!({ "session_id": session_id }))?;
        Ok(reply.entry_id)
    }

    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        let payload = json!({ "session_id": session_id, "attachment_id": attachment_id });
        let Some(stored) = self.call::<Option<StoredAttachment>>("get-attachment", payload)? else {
            return Ok(None);
        };
        let bytes = STANDARD
            .decode(stored.data.as_bytes())
            .map_err(|e| failure("get-attachment", format!("undecodable reply: {e}")))?;
        Ok(Some((stored.meta, bytes)))
    }

    /// Through `list-attachments`, so the bytes do not cross the wire (the protocol has no
    /// metadata-only read of one attachment).
    fn get_attachment_meta(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        let all = self.list_attachments(session_id)?;
        Ok(all.into_iter().find(|m| m.attachment_id == attachment_id))
    }

    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        let reply: ListAttachmentsResponse =
            self.call("list-attachments", json!({ "session_id": session_id }))?;
        Ok(reply.attachments)
    }

    /// One protocol call per write, in order, stopping at the first failure (see the module
    /// docs: not atomic across writes).
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let mut applied = Applied::default();
        for write in &changes.writes {
            self.write(&changes.session_id, write, &mut applied)?;
        }
        Ok(applied)
    }
}

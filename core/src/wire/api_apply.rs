//! `session::store::apply` (an extension of the seed's store protocol): a whole change set in one
//! call, applied atomically by the main, so a bridged multi-write mutation (append-many, fork,
//! update-message, delete) lands all or nothing. Its wire types and their conversion to and from
//! the core's `ChangeSet` / `Applied`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::api_store::{CommitAppendResponse, PutAttachmentRequest};
use super::{AttachmentMeta, Change, MessageDelta, SessionEntry, SessionMeta};
use crate::feed::PendingChange;
use crate::record::CommitOutcome;
use crate::store::{Applied, ChangeSet, Write};

crate::internally_tagged! {
tag = "type", rename_all = "snake_case", remote = "StoreWrite";
/// One write of a change set, as `session::store::apply` carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum StoreWrite {
    PutMeta {
        meta: SessionMeta,
    },
    PutEntry {
        entry: SessionEntry,
    },
    SetActiveLeaf {
        entry_id: String,
    },
    CommitAppend {
        entry: SessionEntry,
        parent_explicit: bool,
    },
    DeleteEntries,
    DeleteActiveLeaf,
    DeleteMeta,
    /// `data`: standard (padded) base64 of the bytes.
    PutAttachment {
        meta: AttachmentMeta,
        data: String,
    },
    DeleteAttachment {
        attachment_id: String,
    },
    DeleteAttachments,
    /// Live sync: text added to one block of one message.
    AppendDelta {
        delta: MessageDelta,
        at: i64,
    },
    /// Lifecycle: the session goes to the trash at `at`.
    Trash {
        at: i64,
    },
    /// Lifecycle: the trashed session comes back.
    Restore,
    /// Lifecycle: the session's `expires_at` (`null` clears it).
    SetExpiry {
        expires_at: Option<i64>,
    },
    /// Live sync: the mutation's changes, recorded with the main's next seqs.
    Feed {
        timestamp: i64,
        retention: usize,
        /// Payload bytes kept (default `feed::DEFAULT_RETENTION_BYTES`).
        #[serde(default = "default_retention_bytes")]
        retention_bytes: u64,
        /// The change set creates the session: its feed starts this new epoch at seq 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        epoch: Option<String>,
        changes: Vec<PendingChange>,
    },
}
}

/// A change set of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApplyRequest {
    pub session_id: String,
    /// Applied in order, all or nothing.
    pub writes: Vec<StoreWrite>,
}

/// What the writes reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApplyResponse {
    /// The outcome of the change set's `commit_append` write, if it had one.
    pub commit: Option<CommitAppendResponse>,
    /// Whether each `delete_attachment` write found the attachment, in order.
    pub attachments_deleted: Vec<bool>,
    /// The changes a `feed` write recorded, with their seqs.
    #[serde(default)]
    pub changes: Vec<Change>,
}

/// Why a request is not a change set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyRequestError {
    /// A `put_attachment` whose `data` is not base64.
    NotBase64(String),
    /// A write names another session than the change set's.
    OtherSession { write: &'static str, session_id: String },
}

impl core::fmt::Display for ApplyRequestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ApplyRequestError::NotBase64(e) => {
                write!(f, "put_attachment data is not valid base64: {e}")
            }
            ApplyRequestError::OtherSession { write, session_id } => {
                write!(f, "{write} names session {session_id}, not the change set's")
            }
        }
    }
}

impl ApplyRequest {
    /// The request that applies `changes`.
    pub fn new(changes: &ChangeSet) -> Self {
        let writes = changes.writes.iter().map(StoreWrite::from).collect();
        ApplyRequest { session_id: changes.session_id.clone(), writes }
    }

    /// The change set it carries: every write of its own session, attachment bytes decoded.
    pub fn into_change_set(self) -> Result<ChangeSet, ApplyRequestError> {
        let mut changes = ChangeSet::new(self.session_id);
        for write in self.writes {
            let write = write.into_write()?;
            let named = match &write {
                Write::PutMeta(meta) => Some(("put_meta", &meta.session_id)),
                Write::PutAttachment { meta, .. } => Some(("put_attachment", &meta.session_id)),
                _ => None,
            };
            if let Some((write, session_id)) = named.filter(|(_, s)| **s != changes.session_id) {
                return Err(ApplyRequestError::OtherSession {
                    write,
                    session_id: session_id.clone(),
                });
            }
            changes.push(write);
        }
        Ok(changes)
    }
}

impl StoreWrite {
    fn into_write(self) -> Result<Write, ApplyRequestError> {
        Ok(match self {
            StoreWrite::PutMeta { meta } => Write::PutMeta(meta),
            StoreWrite::PutEntry { entry } => Write::PutEntry(entry),
            StoreWrite::SetActiveLeaf { entry_id } => Write::SetActiveLeaf(entry_id),
            StoreWrite::CommitAppend { entry, parent_explicit } => {
                Write::CommitAppend { entry, parent_explicit }
            }
            StoreWrite::DeleteEntries => Write::DeleteEntries,
            StoreWrite::DeleteActiveLeaf => Write::DeleteActiveLeaf,
            StoreWrite::DeleteMeta => Write::DeleteMeta,
            StoreWrite::PutAttachment { meta, data } => {
                let request = PutAttachmentRequest { meta, data };
                let bytes = request
                    .bytes()
                    .map_err(|e| ApplyRequestError::NotBase64(alloc::format!("{e}")))?;
                Write::PutAttachment { meta: request.meta, bytes }
            }
            StoreWrite::DeleteAttachment { attachment_id } => {
                Write::DeleteAttachment(attachment_id)
            }
            StoreWrite::DeleteAttachments => Write::DeleteAttachments,
            StoreWrite::AppendDelta { delta, at } => Write::AppendDelta { delta, at },
            StoreWrite::Trash { at } => Write::Trash { at },
            StoreWrite::Restore => Write::Restore,
            StoreWrite::SetExpiry { expires_at } => Write::SetExpiry(expires_at),
            StoreWrite::Feed { timestamp, retention, retention_bytes, epoch, changes } => {
                let retention =
                    crate::feed::Retention { changes: retention, bytes: retention_bytes };
                Write::Feed { timestamp, retention, epoch, changes }
            }
        })
    }
}

impl From<&Write> for StoreWrite {
    fn from(write: &Write) -> Self {
        match write {
            Write::PutMeta(meta) => StoreWrite::PutMeta { meta: meta.clone() },
            Write::PutEntry(entry) => StoreWrite::PutEntry { entry: entry.clone() },
            Write::SetActiveLeaf(id) => StoreWrite::SetActiveLeaf { entry_id: id.clone() },
            Write::CommitAppend { entry, parent_explicit } => {
                StoreWrite::CommitAppend { entry: entry.clone(), parent_explicit: *parent_explicit }
            }
            Write::DeleteEntries => StoreWrite::DeleteEntries,
            Write::DeleteActiveLeaf => StoreWrite::DeleteActiveLeaf,
            Write::DeleteMeta => StoreWrite::DeleteMeta,
            Write::PutAttachment { meta, bytes } => {
                let request = PutAttachmentRequest::new(meta.clone(), bytes);
                StoreWrite::PutAttachment { meta: request.meta, data: request.data }
            }
            Write::DeleteAttachment(id) => {
                StoreWrite::DeleteAttachment { attachment_id: id.clone() }
            }
            Write::DeleteAttachments => StoreWrite::DeleteAttachments,
            Write::AppendDelta { delta, at } => {
                StoreWrite::AppendDelta { delta: delta.clone(), at: *at }
            }
            Write::Trash { at } => StoreWrite::Trash { at: *at },
            Write::Restore => StoreWrite::Restore,
            Write::SetExpiry(expires_at) => StoreWrite::SetExpiry { expires_at: *expires_at },
            Write::Feed { timestamp, retention, epoch, changes } => StoreWrite::Feed {
                timestamp: *timestamp,
                retention: retention.changes,
                retention_bytes: retention.bytes,
                epoch: epoch.clone(),
                changes: changes.clone(),
            },
        }
    }
}

impl From<Applied> for ApplyResponse {
    fn from(applied: Applied) -> Self {
        let commit = applied.commit.map(CommitAppendResponse::from);
        ApplyResponse {
            commit,
            attachments_deleted: applied.attachments_deleted,
            changes: applied.changes,
        }
    }
}

impl From<ApplyResponse> for Applied {
    fn from(response: ApplyResponse) -> Self {
        let commit = response.commit.map(CommitOutcome::from);
        Applied {
            commit,
            attachments_deleted: response.attachments_deleted,
            changes: response.changes,
        }
    }
}

fn default_retention_bytes() -> u64 {
    crate::feed::DEFAULT_RETENTION_BYTES
}

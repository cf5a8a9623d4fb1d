//! Requests and responses of the internal `session::store::*` protocol (contract §5.7): the raw
//! storage operations a bridged instance calls on the authoritative main.

use alloc::string::String;
use alloc::vec::Vec;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{AttachmentMeta, EventEnvelope, SessionEntry, SessionMeta};
use crate::record::CommitOutcome;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionIdRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EntryIdRequest {
    pub session_id: String,
    pub entry_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttachmentIdRequest {
    pub session_id: String,
    pub attachment_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListMetasRequest {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PutMetaRequest {
    pub meta: SessionMeta,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PutEntryRequest {
    pub session_id: String,
    pub entry: SessionEntry,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CommitAppendRequest {
    pub session_id: String,
    pub entry: SessionEntry,
    pub parent_explicit: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CommitAppendResponse {
    pub committed: bool,
    pub entry: SessionEntry,
    pub meta: SessionMeta,
}

// A commit's outcome and its wire form carry the same three fields.
impl From<CommitOutcome> for CommitAppendResponse {
    fn from(c: CommitOutcome) -> Self {
        CommitAppendResponse { committed: c.committed, entry: c.entry, meta: c.meta }
    }
}

impl From<CommitAppendResponse> for CommitOutcome {
    fn from(c: CommitAppendResponse) -> Self {
        CommitOutcome { committed: c.committed, entry: c.entry, meta: c.meta }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PutAttachmentRequest {
    pub meta: AttachmentMeta,
    /// Standard (padded) base64 of the bytes.
    pub data: String,
}

/// One stored attachment as the protocol moves it: metadata plus the bytes as standard base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoredAttachment {
    pub meta: AttachmentMeta,
    pub data: String,
}

impl PutAttachmentRequest {
    /// The request that stores `bytes` under `meta`.
    pub fn new(meta: AttachmentMeta, bytes: &[u8]) -> Self {
        PutAttachmentRequest { meta, data: encode_bytes(bytes) }
    }

    /// The bytes `data` carries.
    pub fn bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        decode_bytes(&self.data)
    }
}

impl StoredAttachment {
    /// `bytes` stored under `meta`, as the protocol moves them.
    pub fn new(meta: AttachmentMeta, bytes: &[u8]) -> Self {
        StoredAttachment { meta, data: encode_bytes(bytes) }
    }

    /// The bytes `data` carries.
    pub fn bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        decode_bytes(&self.data)
    }
}

/// The protocol's one byte codec: standard padded base64.
fn encode_bytes(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn decode_bytes(data: &str) -> Result<Vec<u8>, base64::DecodeError> {
    base64::engine::general_purpose::STANDARD.decode(data.as_bytes())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OkResponse {
    pub ok: bool,
}

impl OkResponse {
    /// The only value the protocol returns: `{ "ok": true }`.
    pub const OK: OkResponse = OkResponse { ok: true };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedResponse {
    pub deleted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActiveLeafResponse {
    /// `null` when the session has no active leaf.
    pub entry_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListEntriesResponse {
    pub entries: Vec<SessionEntry>,
}

// The seed gives `session::store::list-attachments` its own `ListAttachmentsResponse`: same wire
// shape as the public one, but `attachments` carries no description (no ordering promise), which
// the golden schema test pins. Kept undocumented on purpose: a doc comment would enter the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListAttachmentsResponse {
    pub attachments: Vec<AttachmentMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListMetasResponse {
    pub metas: Vec<SessionMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PublishEventsRequest {
    /// Event envelopes produced by a bridged instance's mutation.
    pub events: Vec<EventEnvelope>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PublishEventsResponse {
    /// Number of well-formed envelopes accepted and fanned out.
    pub published: usize,
}

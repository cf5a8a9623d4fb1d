//! Session and attachment metadata records (contract §1.6–§1.7).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{Object, SessionKind, SessionStatus};
// For the intra-doc links of doc comments that are also registered schema descriptions (their
// text must stay the reference's).
#[cfg(doc)]
use super::ContentBlock;

/// A session's metadata record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionMeta {
    pub session_id: String,
    pub title: String,
    pub description: String,
    pub status: SessionStatus,
    /// Short lifecycle detail retained on `working`, `done`, and `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// Who the session is for (`user` by default, `automation`, `e2e`). Fixed at creation —
    /// `session::set-meta` never changes it. Records written before this field existed read back
    /// as `user`.
    #[serde(default)]
    pub kind: SessionKind,
    /// App-defined; the tenancy hook (e.g. `{ "owner": "u_1" }`) that `session::list` and every
    /// trigger config can filter on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Source session id when created by `session::fork`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// Unsent composer input parked on the session (`session::set-draft`), so a client reload
    /// restores what the user was typing. Never set by `session::set-meta`; absent when nothing is
    /// parked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// Attachments parked with the draft (`session::set-draft` `attachment_ids`), resolved to their
    /// stored metadata so a client can rebuild the composer's chips and fetch the bytes back.
    /// Absent when none are parked; never copied by `session::fork`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_attachments: Option<Vec<AttachmentMeta>>,
    /// Milliseconds since epoch.
    pub created_at: i64,
    /// Milliseconds since epoch.
    pub updated_at: i64,
    /// Number of `kind: "message"` entries (custom entries are bookkeeping and not counted).
    pub message_count: u64,
}

/// Metadata of one stored attachment. The bytes live in the session's attachment store
/// (`session::get-attachment`), never inline in the transcript: a message references them through a
/// [`ContentBlock::File`] block carrying the same `attachment_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttachmentMeta {
    /// Store-generated id (`a_<uuid>`), unique within the session.
    pub attachment_id: String,
    pub session_id: String,
    /// Original filename, as uploaded.
    pub name: String,
    /// MIME type, as uploaded (`application/octet-stream` when unknown).
    pub mime: String,
    /// Decoded byte length.
    pub size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// Milliseconds since epoch.
    pub created_at: i64,
}

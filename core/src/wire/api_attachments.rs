//! Requests and responses of the attachment functions: put, get, list, delete.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{AttachmentMeta, ContentBlock};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PutAttachmentRequest {
    pub session_id: String,
    /// Original filename (non-empty).
    pub name: String,
    /// MIME type; pass `application/octet-stream` when unknown.
    pub mime: String,
    /// The bytes as standard (padded) base64. Decoded size must not exceed the configured
    /// `max_attachment_bytes`.
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PutAttachmentResponse {
    pub attachment: AttachmentMeta,
    /// Ready-made `type: "file"` content block referencing the attachment, to embed in the
    /// message's `content`.
    pub block: ContentBlock,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetAttachmentRequest {
    pub session_id: String,
    pub attachment_id: String,
    /// Include the bytes (`data`, standard base64). Default true; pass false for a metadata-only
    /// read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_data: Option<bool>,
}

/// `null` when the session or attachment is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetAttachmentResponse {
    pub attachment: AttachmentMeta,
    /// Standard base64 of the bytes; `null` when `include_data` was false.
    pub data: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListAttachmentsRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListAttachmentsResponse {
    /// Oldest first (`created_at`, then `attachment_id`).
    pub attachments: Vec<AttachmentMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeleteAttachmentRequest {
    pub session_id: String,
    pub attachment_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeleteAttachmentResponse {
    /// `false` when the attachment was already absent (a silent no-op).
    pub deleted: bool,
}

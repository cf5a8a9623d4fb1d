//! Requests and responses of the session lifecycle functions: create, ensure, get, list, set-meta,
//! set-status, set-draft, delete.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{AttachmentMeta, ListOrder, Object, SessionKind, SessionMeta, SessionStatus};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateRequest {
    /// Session title; may be refined later with `session::set-meta`. Default "".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Session description. Default "".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// App-defined metadata persisted onto `SessionMeta` — the tenancy hook (e.g.
    /// `{ "owner": "u_1" }`) that `session::list` and every trigger config can filter on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Session kind. Default `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SessionKind>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateResponse {
    pub session_id: String,
    pub meta: SessionMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnsureRequest {
    /// Caller-chosen session id to ensure.
    pub session_id: String,
    /// Title applied only when the session is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description applied only when the session is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Metadata applied only when the session is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Kind applied only when the session is created. Defaults to `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SessionKind>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnsureResponse {
    pub session_id: String,
    pub meta: SessionMeta,
    /// True when this call created the session (and fired `session::created`).
    pub created: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetRequest {
    pub session_id: String,
}

/// `null` when the session is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetResponse {
    pub meta: SessionMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListRequest {
    /// Page size. Default 50, clamped to the configured maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Opaque pagination cursor from a previous response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Only sessions with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SessionStatus>,
    /// Only sessions whose kind is one of these. Omit for every kind; an empty list matches
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<SessionKind>>,
    /// Equality filter against `SessionMeta.metadata` (tenancy): every given key must equal the
    /// stored value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Sort order. Default `updated_desc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<ListOrder>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListResponse {
    pub sessions: Vec<SessionMeta>,
    /// Present when more pages remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetMetaRequest {
    pub session_id: String,
    /// New title (omit to keep the current one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New description (omit to keep the current one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// New metadata object — **replaces** the stored one wholesale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetMetaResponse {
    pub meta: SessionMeta,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetStatusRequest {
    pub session_id: String,
    /// Target status: `idle` / `working` / `done` / `error`.
    pub status: SessionStatus,
    /// Short cause/phase stored as `status_reason` — kept on `error` (failure cause), `working`
    /// (live phase detail), and `done` (for terminal detail such as `stopped`); cleared on `idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetStatusResponse {
    pub status: SessionStatus,
    pub previous_status: SessionStatus,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetDraftRequest {
    pub session_id: String,
    /// The unsent input to park. Omit, or send empty/whitespace-only text, to clear the stored
    /// draft text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// Attachments parked with the draft, by id (uploaded beforehand with
    /// `session::put-attachment`; an unknown id is `session/invalid_request`). Omit to leave the
    /// parked attachments unchanged — a text-only save must not drop them — or send `[]` to clear
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachment_ids: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetDraftResponse {
    /// The draft text as stored after this call (`null` when cleared).
    pub draft: Option<String>,
    /// The parked attachments as stored after this call, in request order.
    pub attachments: Vec<AttachmentMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeleteRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeleteResponse {
    /// False when the session did not exist (no event fires).
    pub deleted: bool,
}

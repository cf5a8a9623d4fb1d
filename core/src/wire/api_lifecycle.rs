//! Wire types of the lifecycle functions (extensions): `session::trash`, `session::restore`,
//! `session::list-trash`, `session::set-expiry`, `session::lifecycle` and `session::sweep`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Object, SessionMeta};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrashRequest {
    /// The session to move to the trash.
    pub session_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrashResponse {
    /// False when the session is unknown or already in the trash.
    pub trashed: bool,
    /// When the sweep purges it (milliseconds since epoch; `trash_retention_secs` after now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge_at: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RestoreRequest {
    /// The trashed session to bring back.
    pub session_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RestoreResponse {
    /// False when no session of that id is in the trash.
    pub restored: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListTrashRequest {
    /// Equality match against the trashed sessions' `SessionMeta.metadata` (subset match, as
    /// `session::list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Page size (default and maximum as `session::list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Trashed sessions to skip (newest trashed first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListTrashResponse {
    /// Newest trashed first.
    pub sessions: Vec<TrashedSession>,
    /// Trashed sessions matching the filter, over every page.
    pub total: u64,
}

/// One session in the trash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrashedSession {
    /// Its meta as it was when it was trashed (what `session::restore` brings back).
    pub meta: SessionMeta,
    /// When it was trashed (milliseconds since epoch).
    pub trashed_at: i64,
    /// When the sweep purges it.
    pub purge_at: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetExpiryRequest {
    pub session_id: String,
    /// When the session is deleted, in milliseconds since the epoch (an integer from 0 to
    /// 253402300799999, 9999-12-31); `null` clears it. A time already past is swept at once.
    pub expires_at: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetExpiryResponse {
    pub session_id: String,
    /// The expiry now set (`null`: none).
    pub expires_at: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LifecycleRequest {
    pub session_id: String,
}

/// A session's lifecycle; `session::lifecycle` answers `null` for an unknown session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LifecycleResponse {
    pub session_id: String,
    /// When the session expires (`null`: never).
    pub expires_at: Option<i64>,
    /// When it was trashed (`null`: it is not in the trash).
    pub trashed_at: Option<i64>,
    /// When the sweep purges it from the trash.
    pub purge_at: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SweepRequest {}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SweepResponse {
    /// Sessions deleted because their `expires_at` passed (each fired `session::deleted`
    /// unless it was in the trash).
    pub expired: u64,
    /// Trashed sessions purged after `trash_retention_secs`.
    pub purged: u64,
}

/// `session::store::lifecycles` (store protocol extension): the lifecycle of one session, or of
/// every session that has one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreLifecyclesRequest {
    /// Only this session (its lifecycle, when not empty); absent: every session that has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreLifecycles {
    pub lifecycles: Vec<StoredLifecycle>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoredLifecycle {
    pub session_id: String,
    pub lifecycle: crate::lifecycle::Lifecycle,
}

//! Wire types of `session::erase` (an extension): removing every trace of the sessions a
//! tenant's filter names (GDPR Article 17 erasure).

use alloc::string::String;
use serde::{Deserialize, Serialize};

use super::Object;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// Unknown fields are let through like every request's: the engine adds `_caller_worker_id`.
pub struct EraseRequest {
    /// Erase this session (alone; with no `metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Erase every session whose `SessionMeta.metadata` holds these keys with these values
    /// (subset match, as `session::list`). An empty or absent filter names every session and is
    /// refused unless `all` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Confirms an erase of every session (no `session_id`, empty `metadata`).
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub all: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EraseResponse {
    /// Sessions erased.
    pub erased: u64,
    /// Their bytes: each session as a snapshot (its JSONL lines) plus its attachments' bytes.
    pub bytes: u64,
}

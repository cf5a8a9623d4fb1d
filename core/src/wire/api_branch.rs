//! Requests and responses of the branching functions: fork and set-active-leaf.

use alloc::string::String;
use serde::{Deserialize, Serialize};

use super::SessionMeta;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ForkRequest {
    /// Source session.
    pub session_id: String,
    /// Fork point: the root -> entry path is copied (copy-on-fork, fresh entry ids) and becomes the
    /// new session's active path.
    pub entry_id: String,
    /// Title for the new session (default: the source's title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ForkResponse {
    /// The new session's id (`forked_from` is set on its meta).
    pub session_id: String,
    pub meta: SessionMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetActiveLeafRequest {
    pub session_id: String,
    /// The entry the active path should end at. Subsequent `session::append` without `parent_id`
    /// chains from here.
    pub entry_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetActiveLeafResponse {
    pub active_leaf: String,
}

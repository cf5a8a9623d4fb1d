//! Binding configs of the seven trigger types (contract §3.3): what a subscriber may filter on.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{Object, Role};
// For the intra-doc links of doc comments that are also registered schema descriptions (their
// text must stay the reference's).
#[cfg(doc)]
use crate::events::STORE_EVENTS;

/// Config accepted by `session::created` bindings. The spec defines no filters for this type
/// beyond the universal `metadata` match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreatedBindingConfig {
    /// Equality match against `SessionMeta.metadata`: every key given here must equal the stored
    /// value (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// Config accepted by `session::message-added` and `session::message-updated` bindings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MessageBindingConfig {
    /// Only deliver events for this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only deliver events whose message role is in this list. `kind: "custom"` entries carry no
    /// role and never match a `roles` filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    /// Equality match against `SessionMeta.metadata` (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// Config accepted by `session::status-changed`, `session::meta-updated` and `session::deleted`
/// bindings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionBindingConfig {
    /// Only deliver events for this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Equality match against `SessionMeta.metadata` (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// Config accepted by [`STORE_EVENTS`] bindings: none. The feed is unfiltered by design — each
/// bridged instance filters locally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreEventsBindingConfig {}

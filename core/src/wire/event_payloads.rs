//! The six public event payloads (contract §3.2) and the `EventEnvelope` that carries any of them
//! across instances (§5.7).

use alloc::string::String;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentMessage, CustomPayload, Object, SessionStatus};

/// Payload of `session::created`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedEvent {
    pub session_id: String,
    pub title: String,
    pub description: String,
    pub status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    pub created_at: i64,
}

/// Payload of `session::message-added`: exactly one of `message` / `custom`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageAddedEvent {
    pub session_id: String,
    pub entry_id: String,
    pub parent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AgentMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomPayload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
    pub timestamp: i64,
}

/// Payload of `session::message-updated`: the full updated message and its new revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageUpdatedEvent {
    pub session_id: String,
    pub entry_id: String,
    pub message: AgentMessage,
    pub revision: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
    pub timestamp: i64,
}

/// Payload of `session::status-changed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatusChangedEvent {
    pub session_id: String,
    pub status: SessionStatus,
    pub previous_status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    pub timestamp: i64,
}

/// Payload of `session::meta-updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetaUpdatedEvent {
    pub session_id: String,
    pub title: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    pub timestamp: i64,
}

/// Payload of `session::deleted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeletedEvent {
    pub session_id: String,
    pub timestamp: i64,
}

/// Wire form of an `EmittableEvent` for cross-instance propagation. `session_metadata` rides
/// along so `metadata` filters keep working at every edge (the spec payloads do not carry it).
///
/// (`EmittableEvent` is the seed's name for what this crate calls [`crate::Emitted`].)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        description = "Wire form of an [`EmittableEvent`] for cross-instance propagation. `session_metadata` rides along so `metadata` filters keep working at every edge (the spec payloads do not carry it)."
    )
)]
pub struct EventEnvelope {
    /// One of the six public trigger type ids.
    pub trigger_type: String,
    /// The spec payload for that trigger type.
    pub payload: Value,
    /// `SessionMeta.metadata` as of the mutation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_metadata: Option<Object>,
    /// Live sync (our extension): the event's feed change, so every instance's
    /// `session::changed` bindings get it. Left out of the registered schema (the seed's
    /// `publish-events` request stays byte-identical); a v1.0.32 main ignores it and fans out
    /// without it, and a change-less envelope reaches only the seed bindings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub change: Option<super::Change>,
}

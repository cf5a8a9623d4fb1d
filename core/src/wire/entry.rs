//! `SessionEntry`: one node of a session's entry tree (tagged by `kind`), with shared accessors.

use alloc::string::String;
use serde::Serialize;
use serde_json::Value;

use super::{AgentMessage, CustomPayload, Object};

crate::internally_tagged! {
tag = "kind", rename_all = "snake_case", remote = "SessionEntry";
/// The entry envelope giving each stored item identity, ordering and a parent link (used for
/// forking), discriminated by `kind`.
// Unboxed on purpose: `message` is the common variant and its fields are matched by value all over
// the operations; boxing it would buy nothing but an allocation per entry.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum SessionEntry {
    /// A transcript message.
    Message {
        id: String,
        parent_id: Option<String>,
        /// Milliseconds since epoch (entry creation time).
        timestamp: i64,
        /// Starts at 0; increments on every content update.
        #[serde(default)]
        revision: u64,
        /// Opaque writer-supplied correlation (e.g. `{ turn_id }`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<Object>,
        message: AgentMessage,
    },
    /// Bookkeeping *about* the conversation that is not a message at all (e.g. the harness's
    /// compaction record).
    Custom {
        id: String,
        parent_id: Option<String>,
        /// Milliseconds since epoch (entry creation time).
        timestamp: i64,
        /// Starts at 0; increments on every content update.
        #[serde(default)]
        revision: u64,
        /// Opaque writer-supplied correlation (e.g. `{ turn_id }`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<Object>,
        custom_type: String,
        #[serde(default)]
        data: Value,
    },
}
}

impl SessionEntry {
    /// The entry id.
    pub fn id(&self) -> &str {
        match self {
            SessionEntry::Message { id, .. } | SessionEntry::Custom { id, .. } => id,
        }
    }

    /// The parent entry id (`None` for a root).
    pub fn parent_id(&self) -> Option<&str> {
        match self {
            SessionEntry::Message { parent_id, .. } | SessionEntry::Custom { parent_id, .. } => {
                parent_id.as_deref()
            }
        }
    }

    /// Re-points the entry at another parent.
    pub fn set_parent_id(&mut self, parent: Option<String>) {
        match self {
            SessionEntry::Message { parent_id, .. } | SessionEntry::Custom { parent_id, .. } => {
                *parent_id = parent
            }
        }
    }

    /// Creation time (worker clock), never changed afterwards.
    pub fn timestamp(&self) -> i64 {
        match self {
            SessionEntry::Message { timestamp, .. } | SessionEntry::Custom { timestamp, .. } => {
                *timestamp
            }
        }
    }

    /// Content revision: 0 at creation, +1 per successful update.
    pub fn revision(&self) -> u64 {
        match self {
            SessionEntry::Message { revision, .. } | SessionEntry::Custom { revision, .. } => {
                *revision
            }
        }
    }

    /// The writer-supplied origin, if any.
    pub fn origin(&self) -> Option<&Object> {
        match self {
            SessionEntry::Message { origin, .. } | SessionEntry::Custom { origin, .. } => {
                origin.as_ref()
            }
        }
    }

    /// The message of a `kind:"message"` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            SessionEntry::Message { message, .. } => Some(message),
            SessionEntry::Custom { .. } => None,
        }
    }

    /// The custom payload of a `kind:"custom"` entry, as a `CustomPayload`.
    pub fn custom_payload(&self) -> Option<CustomPayload> {
        match self {
            SessionEntry::Custom { custom_type, data, .. } => {
                Some(CustomPayload { custom_type: custom_type.clone(), data: data.clone() })
            }
            SessionEntry::Message { .. } => None,
        }
    }

    /// True for `kind:"message"` entries (the ones `message_count` counts).
    pub fn is_message(&self) -> bool {
        matches!(self, SessionEntry::Message { .. })
    }
}

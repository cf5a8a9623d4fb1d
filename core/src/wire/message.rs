//! Transcript messages: the `AgentMessage` union (tagged by `role`) and the custom-entry payload.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, ErrorKind, Role, StopReason, Usage};

crate::internally_tagged! {
tag = "role", rename_all = "snake_case", remote = "AgentMessage";
/// The canonical transcript message union, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum AgentMessage {
    User {
        content: Vec<ContentBlock>,
        /// Milliseconds since epoch.
        timestamp: i64,
    },
    Assistant {
        content: Vec<ContentBlock>,
        stop_reason: StopReason,
        model: String,
        provider: String,
        /// Milliseconds since epoch.
        timestamp: i64,
        /// Provider's raw finish reason, passed through untouched.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        native_stop_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_kind: Option<ErrorKind>,
        /// Report-and-continue notices (e.g. dropped unsupported param).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        warnings: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// The AGENT worker that produced this turn (`claude-code`, `pi`), when one says so.
        /// Distinct from `provider`, which names who served the model: two agents can run the same
        /// model, and a reader given only a model cannot tell which agent answered. Optional,
        /// because the harness's own turns have no agent worker to name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    FunctionResult {
        /// Echoes the `function_call` block id this result answers.
        function_call_id: String,
        function_id: String,
        content: Vec<ContentBlock>,
        /// Opaque structured payload kept alongside the rendered content.
        #[serde(default)]
        details: Value,
        #[serde(default)]
        is_error: bool,
        /// Milliseconds since epoch.
        timestamp: i64,
    },
    /// Escape hatch for app-specific transcript items (system notices, UI markers, attachments,
    /// ...).
    Custom {
        /// App-defined discriminator.
        custom_type: String,
        content: Vec<ContentBlock>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Milliseconds since epoch.
        timestamp: i64,
    },
}
}

impl AgentMessage {
    /// The message's role.
    pub fn role(&self) -> Role {
        match self {
            AgentMessage::User { .. } => Role::User,
            AgentMessage::Assistant { .. } => Role::Assistant,
            AgentMessage::FunctionResult { .. } => Role::FunctionResult,
            AgentMessage::Custom { .. } => Role::Custom,
        }
    }

    /// The message's content blocks.
    pub fn content(&self) -> &[ContentBlock] {
        match self {
            AgentMessage::User { content, .. }
            | AgentMessage::Assistant { content, .. }
            | AgentMessage::FunctionResult { content, .. }
            | AgentMessage::Custom { content, .. } => content,
        }
    }

    /// Mutable access to the content blocks.
    pub fn content_mut(&mut self) -> &mut Vec<ContentBlock> {
        match self {
            AgentMessage::User { content, .. }
            | AgentMessage::Assistant { content, .. }
            | AgentMessage::FunctionResult { content, .. }
            | AgentMessage::Custom { content, .. } => content,
        }
    }

    /// True for an assistant message with at least one top-level `function_call` block.
    pub fn has_function_call(&self) -> bool {
        matches!(self, AgentMessage::Assistant { content, .. }
            if content.iter().any(|b| matches!(b, ContentBlock::FunctionCall { .. })))
    }
}

/// Bookkeeping payload of a `kind: "custom"` session entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CustomPayload {
    /// App-defined discriminator (e.g. `"compaction"`).
    pub custom_type: String,
    /// Opaque app data.
    #[serde(default)]
    pub data: Value,
}

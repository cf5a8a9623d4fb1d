//! What pi line an entry is, or is written as ([`Kind`]): a message by its role, or an entry
//! type.

use alloc::format;
use alloc::string::String;
use serde_json::{Map, Value};

use super::{object_at, str_at, Stash};
use crate::compaction::record_of;
use crate::wire::{AgentMessage, SessionEntry};

/// What pi line an entry is (or is written as): a message by its role, or an entry type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// `message`, role `user`: our user message.
    User,
    /// `message`, role `assistant`: our assistant message.
    Assistant,
    /// `message`, role `toolResult`: our function result.
    ToolResult,
    /// `message`, role `custom`: our custom message.
    RoleCustom,
    /// `message` of another role (`bashExecution`, ...): our custom message whose details are the
    /// pi message's fields.
    RoleOther(String),
    /// `custom_message`: our custom message.
    CustomMessage,
    /// `branch_summary`: our custom message `branch_summary`.
    BranchSummary,
    /// `compaction`: our compaction record.
    Compaction,
    /// `custom`: our custom entry.
    Custom,
    /// Any other entry type (`model_change`, `thinking_level_change`, `label`, `session_info`,
    /// types pi adds later): our custom entry of that type whose data is the line's other fields.
    Spread(String),
}

impl Kind {
    /// The name the stash keeps (`message:user`, `branch_summary`, ...).
    pub(super) fn name(&self) -> String {
        match self {
            Kind::User => "message:user".into(),
            Kind::Assistant => "message:assistant".into(),
            Kind::ToolResult => "message:toolResult".into(),
            Kind::RoleCustom => "message:custom".into(),
            Kind::RoleOther(role) => format!("message:{role}"),
            Kind::CustomMessage => "custom_message".into(),
            Kind::BranchSummary => "branch_summary".into(),
            Kind::Compaction => "compaction".into(),
            Kind::Custom => "custom".into(),
            Kind::Spread(kind) => kind.clone(),
        }
    }

    /// The kind [`Kind::name`] names.
    pub(super) fn parse(name: &str) -> Kind {
        if let Some(role) = name.strip_prefix("message:") {
            return Kind::of_role(role);
        }
        match name {
            "custom_message" => Kind::CustomMessage,
            "branch_summary" => Kind::BranchSummary,
            "compaction" => Kind::Compaction,
            "custom" => Kind::Custom,
            other => Kind::Spread(other.into()),
        }
    }

    pub(super) fn of_role(role: &str) -> Kind {
        match role {
            "user" => Kind::User,
            "assistant" => Kind::Assistant,
            "toolResult" => Kind::ToolResult,
            "custom" => Kind::RoleCustom,
            other => Kind::RoleOther(other.into()),
        }
    }

    /// The kind of a pi entry line (a `message` without a role is spread like an unknown type).
    pub(super) fn of_line(line: &Map<String, Value>) -> Kind {
        match str_at(line, "type") {
            "message" => match object_at(line, "message").and_then(|m| m.get("role")) {
                Some(Value::String(role)) => Kind::of_role(role),
                _ => Kind::Spread("message".into()),
            },
            kind => Kind::parse(kind),
        }
    }

    /// The kind an entry is written as when no stash says otherwise.
    pub(super) fn default_for(entry: &SessionEntry) -> Kind {
        match entry {
            SessionEntry::Message { message, .. } => match message {
                AgentMessage::User { .. } => Kind::User,
                AgentMessage::Assistant { .. } => Kind::Assistant,
                AgentMessage::FunctionResult { .. } => Kind::ToolResult,
                AgentMessage::Custom { .. } => Kind::CustomMessage,
            },
            SessionEntry::Custom { .. } if is_compaction_record(entry) => Kind::Compaction,
            SessionEntry::Custom { .. } => Kind::Custom,
        }
    }

    /// Whether an entry can be written as this kind.
    pub(super) fn fits(&self, entry: &SessionEntry) -> bool {
        match (self, entry.message()) {
            (Kind::User, Some(AgentMessage::User { .. }))
            | (Kind::Assistant, Some(AgentMessage::Assistant { .. }))
            | (Kind::ToolResult, Some(AgentMessage::FunctionResult { .. })) => true,
            (
                Kind::RoleCustom | Kind::RoleOther(_) | Kind::CustomMessage | Kind::BranchSummary,
                Some(AgentMessage::Custom { .. }),
            ) => true,
            (Kind::Compaction, None) => is_compaction_record(entry),
            (Kind::Custom | Kind::Spread(_), None) => true,
            _ => false,
        }
    }

    /// Whether the line's content (or its message's) may be a plain string.
    pub(super) fn has_content(&self) -> bool {
        matches!(
            self,
            Kind::User
                | Kind::Assistant
                | Kind::ToolResult
                | Kind::RoleCustom
                | Kind::CustomMessage
        )
    }
}

fn is_compaction_record(entry: &SessionEntry) -> bool {
    matches!(record_of(entry), Some(Ok(_)))
}

/// The kind an entry is written as: its stash's, when the entry still fits it, else its own.
pub(super) fn written_kind(entry: &SessionEntry) -> Kind {
    Stash::of(entry)
        .kind
        .filter(|kind| kind.fits(entry))
        .unwrap_or_else(|| Kind::default_for(entry))
}

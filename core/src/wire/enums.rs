//! The closed string enums of the wire format (contract §1.1): any other string is a decode error.

use serde::{Deserialize, Serialize};

/// Message role discriminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    FunctionResult,
    Custom,
}

/// Why an assistant message stopped generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    End,
    Length,
    FunctionCall,
    Aborted,
    Error,
}

/// Coarse error classification carried by failed assistant messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    AuthExpired,
    RateLimited,
    ContextOverflow,
    Transient,
    Permanent,
}

/// Coarse session lifecycle status, rendered directly by consumers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    #[default]
    Idle,
    Working,
    Done,
    Error,
}

/// Who a session is for. `user` (the default) is a human-facing chat — what the console lists by
/// default; `automation` is a machine-driven run; `e2e` is a session created by an end-to-end suite
/// (harness-e2e). Consumers filter on it (`session::list` `kinds`); the store never changes
/// behaviour on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    #[default]
    User,
    Automation,
    E2e,
}

/// Sort order for `session::list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ListOrder {
    CreatedAsc,
    CreatedDesc,
    #[default]
    UpdatedDesc,
}

impl ListOrder {
    /// The wire string, also used as the cursor's order tag.
    pub fn as_str(self) -> &'static str {
        match self {
            ListOrder::CreatedAsc => "created_asc",
            ListOrder::CreatedDesc => "created_desc",
            ListOrder::UpdatedDesc => "updated_desc",
        }
    }
}

/// Outcome of the most recent hot-reload attempt, exposed via `session::config-status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReloadOutcome {
    /// The live runtime reflects the most recent configuration the worker loaded.
    #[default]
    Applied,
    /// The most recent `configuration:updated` delivered a value the worker could NOT build (e.g.
    /// an unreadable `data_dir` or a self-referential bridge url); the previous runtime is still
    /// active and the central store has DIVERGED from what this worker is running.
    Rejected,
}

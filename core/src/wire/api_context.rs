//! Wire types of `session::compact` and `session::context` (extensions, issue 38): compaction
//! records and what a model is given for a branch.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{MessageItem, Object};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompactRequest {
    pub session_id: String,
    /// What the compacted part said, as the model will be told.
    pub summary: String,
    /// The oldest entry kept after the compaction: on the path to the new record, and not a cut
    /// between a function call and its result.
    pub first_kept_entry_id: String,
    /// Tokens of the context before the compaction, as the harness counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    /// Anything else the harness keeps with it (opaque).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The record's parent (default: the active leaf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Caller-supplied id for an idempotent write, as on `session::append`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// Opaque correlation, echoed on the event, as on `session::append`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextRequest {
    pub session_id: String,
    /// The branch's last entry (default: the active leaf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    /// Most tokens the answer may hold (estimated): the oldest whole turns are dropped until it
    /// fits (never the newest). At least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<i64>,
    /// As on `session::messages` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_image_data: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextResponse {
    pub session_id: String,
    /// The branch's last entry (`null`: the session has no entries).
    pub leaf: Option<String>,
    /// The newest valid compaction on the branch, whose summary stands for what came before
    /// its first kept entry (`null`: none).
    pub compaction: Option<ContextCompaction>,
    /// The message entries from the compaction's first kept entry (else the root) to the leaf,
    /// oldest first, custom entries left out, less the dropped turns.
    pub messages: Vec<MessageItem>,
    /// Estimated tokens of the summary and the messages (see `session::context`'s estimator).
    pub tokens: u64,
    /// What the budget left out, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<DroppedTurns>,
    /// Compaction records on the branch, newer than the one applied, that are not honoured.
    pub ignored: Vec<IgnoredCompaction>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextCompaction {
    /// The compaction record's entry.
    pub entry_id: String,
    pub summary: String,
    pub first_kept_entry_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DroppedTurns {
    /// Whole turns dropped (a turn starts at a user message).
    pub turns: u64,
    /// Message entries dropped.
    pub messages: u64,
    /// Their estimated tokens.
    pub tokens: u64,
    /// The first kept message after the drop.
    pub first_kept_entry_id: String,
    /// True when even the newest turn alone is over the budget (it is kept whole).
    pub over_budget: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IgnoredCompaction {
    pub entry_id: String,
    /// Why it is not honoured.
    pub reason: String,
}

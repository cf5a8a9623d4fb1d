//! Wire types of `session::usage` (extension, issue 38): token, cost and message totals of a
//! branch and of the whole session.

use alloc::string::String;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageRequest {
    pub session_id: String,
    /// The branch's last entry (default: the active leaf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageResponse {
    pub session_id: String,
    /// The branch's last entry (`null`: the session has no entries).
    pub leaf: Option<String>,
    /// The entries on the path root → leaf.
    pub branch: UsageTotals,
    /// Every entry of the session, on any branch.
    pub session: UsageTotals,
}

/// Sums of the `usage` assistant messages carry, and message counts by role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UsageTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
    /// Summed in billionths of a dollar (each message's cost rounded to one), so totals kept
    /// incrementally equal totals rebuilt by replay exactly.
    pub cost_usd: f64,
    pub messages: MessageCounts,
}

/// Message entries by role (custom entries are not messages).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageCounts {
    pub user: u64,
    pub assistant: u64,
    pub function_result: u64,
    pub custom: u64,
}

/// `session::store::usage` (store protocol, extension): a session's tallies on the main.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreUsageRequest {
    pub session_id: String,
    /// The branch's last entry (none: the branch tally is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
}

/// The tallies `session::store::usage` answers, as integers (exact).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreUsage {
    pub branch: crate::usage::Tally,
    pub session: crate::usage::Tally,
}

//! Requests and responses of the operator functions: config-status and on-config-change.

use alloc::string::String;
use serde::{Deserialize, Serialize};

use super::ReloadOutcome;

/// Input of `session::config-status` — takes no arguments. A struct (not `Value`) keeps the request
/// schema concrete; the engine-injected `_caller_worker_id` (and any other unknown field) is
/// ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfigStatusRequest {}

/// Operator-visible hot-reload status. `rejected_reloads > 0` (or `last_outcome == Rejected`)
/// means a stored config was refused and the worker is running an older adapter than the central
/// store — actionable divergence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReloadStatus {
    pub last_outcome: ReloadOutcome,
    /// Build error from the most recent rejected reload (why it was refused).
    pub last_error: Option<String>,
    /// Cumulative count of rejected reloads since boot (never reset).
    pub rejected_reloads: u64,
}

/// Internal `session::on-config-change` trigger payload. The handler re-fetches the authoritative
/// configuration, so this carries only the (advisory) configuration id; a struct (not `Value`)
/// keeps the request schema concrete and unknown fields are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OnConfigChangeEvent {
    /// Configuration id that changed (advisory; the handler re-fetches the value).
    #[serde(default)]
    pub id: Option<String>,
}

/// Ack returned by the internal `session::on-config-change` handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OnConfigChangeResponse {
    pub ok: bool,
}

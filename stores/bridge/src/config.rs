//! The bridge adapter's configuration (contract §6.1): `{ name: "bridge", config: { url,
//! timeout_ms } }` in the worker's stored config.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Config of the bridge adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BridgeAdapterConfig {
    /// WebSocket URL of the main instance's engine.
    pub url: String,
    /// Per store/publish call timeout, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    5000
}

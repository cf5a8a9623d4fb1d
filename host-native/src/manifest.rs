//! `--manifest` (contract §6.6): what the worker is, printed without connecting.

use serde_json::{json, Value};

use crate::config::WorkerConfig;

/// One-line description of the worker.
pub const DESCRIPTION: &str =
    "Durable, reactive, branching store of typed conversation entries with six emitted trigger types.";

/// The manifest JSON.
pub fn manifest() -> Value {
    json!({
        "name": "session-manager",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "default_config": WorkerConfig::default().to_value(),
        "supported_targets": [env!("SESSION_MANAGER_TARGET")],
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn manifest_shape() {
        let m = super::manifest();
        assert_eq!(m["name"], "session-manager");
        assert_eq!(m["default_config"]["adapter"]["name"], "fs");
        assert!(m["default_config"]["adapter"]["config"]["data_dir"]
            .as_str()
            .unwrap()
            .ends_with("data/session-manager"));
        assert_eq!(m["default_config"]["adapter"]["config"]["fsync"], "group");
        assert!(!m["supported_targets"][0].as_str().unwrap().is_empty());
    }
}

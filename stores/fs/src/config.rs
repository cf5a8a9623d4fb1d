//! The fs adapter's configuration (contract §6.1): the `data_dir` and `fsync` keys of
//! `{ name: "fs", config }` in the worker's stored config, and where a configured `data_dir`
//! resolves.

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::SyncMode;

/// Relative default of the fs adapter's `data_dir`.
pub const DEFAULT_DATA_DIR: &str = "data/session-manager";

/// Config of the fs adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsAdapterConfig {
    /// Directory of the session files; relative paths resolve against `III_COMPOSE_DIR` (else the
    /// working directory), `~` against the home directory.
    #[serde(default = "default_data_dir")]
    pub data_dir: String,
    /// When writes reach stable storage: `group` (default: every write is flushed before it is
    /// acknowledged, concurrent writers share one flush), `always` (one flush per write, same
    /// guarantee) or `never` (the OS writes back when it likes: survives a worker crash, not a
    /// power loss). The worker's `--fs-sync` flag, when given, overrides it.
    #[serde(default)]
    pub fsync: SyncMode,
}

/// `data/session-manager`, made absolute under `III_COMPOSE_DIR` when that is set and non-empty.
pub fn default_data_dir() -> String {
    match compose_dir() {
        Some(dir) => dir.join(DEFAULT_DATA_DIR).to_string_lossy().into_owned(),
        None => DEFAULT_DATA_DIR.to_string(),
    }
}

fn compose_dir() -> Option<PathBuf> {
    std::env::var_os("III_COMPOSE_DIR").filter(|v| !v.is_empty()).map(PathBuf::from)
}

impl Default for FsAdapterConfig {
    fn default() -> Self {
        FsAdapterConfig { data_dir: default_data_dir(), fsync: SyncMode::default() }
    }
}

/// Resolves a configured `data_dir` (contract §6.1): absolute as is; `~` / `~/…` under `$HOME`
/// (or `USERPROFILE`); otherwise relative to `III_COMPOSE_DIR` when set, else to the working
/// directory. `./` components are dropped.
pub fn resolve_data_dir(data_dir: &str) -> PathBuf {
    let home = || {
        std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .map(PathBuf::from)
            .unwrap_or_default()
    };
    let path = if data_dir == "~" {
        home()
    } else if let Some(rest) = data_dir.strip_prefix("~/") {
        home().join(rest)
    } else if Path::new(data_dir).is_absolute() {
        PathBuf::from(data_dir)
    } else {
        let base = compose_dir().or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        base.join(data_dir)
    };
    path.components().filter(|c| !matches!(c, Component::CurDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_resolution() {
        assert_eq!(resolve_data_dir("/abs/./x"), PathBuf::from("/abs/x"));
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        assert_eq!(resolve_data_dir("~/d"), home.join("d"));
        assert!(resolve_data_dir("./rel/dir").ends_with("rel/dir"));
        assert!(resolve_data_dir("rel").is_absolute());
    }
}

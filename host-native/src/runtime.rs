//! The live runtime: the adapter it was built from and its store. Handlers take a snapshot per
//! call, so a hot reload swaps it without re-registering anything.

use std::sync::Arc;

use session_core::Store;

use crate::config::{resolve_data_dir, AdapterConfig};
use crate::fs::{FsConfig, FsStore, SyncMode};

/// A built storage runtime.
pub struct Runtime {
    pub adapter: AdapterConfig,
    pub store: Arc<dyn Store + Send + Sync>,
    fs: Option<Arc<FsStore>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("adapter", &self.adapter).finish_non_exhaustive()
    }
}

impl Runtime {
    /// Builds the runtime of `adapter`. `own_url` is this instance's engine URL (a bridge to it
    /// would defer to itself); `sync_override` (the `--fs-sync` flag) replaces the fs adapter's
    /// `fsync` key when set. Blocking: opens the data directory.
    pub fn build(
        adapter: &AdapterConfig,
        own_url: &str,
        sync_override: Option<SyncMode>,
    ) -> Result<Runtime, String> {
        match adapter {
            AdapterConfig::Fs(fs) => {
                let dir = resolve_data_dir(&fs.data_dir);
                let sync = sync_override.unwrap_or(fs.fsync);
                let store = FsStore::open(FsConfig::new(&dir).sync(sync))
                    .map_err(|e| format!("fs adapter: cannot open {}: {e}", dir.display()))?;
                let store = Arc::new(store);
                Ok(Runtime { adapter: adapter.clone(), store: store.clone(), fs: Some(store) })
            }
            AdapterConfig::Bridge(bridge) if bridge.url == own_url => Err(format!(
                "bridge adapter: url {} is this instance's own engine (it would defer to itself)",
                bridge.url
            )),
            AdapterConfig::Bridge(_) => Err("bridge adapter not implemented yet".to_string()),
        }
    }

    /// A runtime over any store, reported as fs mode (tests, tools).
    pub fn over(adapter: AdapterConfig, store: Arc<dyn Store + Send + Sync>) -> Runtime {
        Runtime { adapter, store, fs: None }
    }

    /// Whether this runtime is authoritative (serves `session::store::*`, feeds bridges).
    pub fn is_fs(&self) -> bool {
        matches!(self.adapter, AdapterConfig::Fs(_))
    }

    /// `fs` or `bridge`.
    pub fn mode(&self) -> &'static str {
        self.adapter.name()
    }

    /// Makes everything acknowledged durable (writes are synced before they are acknowledged;
    /// this saves the fs store's listing catalog).
    pub fn flush(&self) {
        if let Some(fs) = &self.fs {
            if let Err(e) = fs.flush_catalog() {
                tracing::warn!("flushing the fs store catalog failed: {e}");
            }
        }
    }
}

/// Parses `always` | `group` | `never` (the `--fs-sync` flag).
pub fn parse_sync_mode(text: &str) -> Result<SyncMode, String> {
    match text {
        "always" => Ok(SyncMode::Always),
        "group" => Ok(SyncMode::Group),
        "never" => Ok(SyncMode::Never),
        other => Err(format!("unknown fs sync mode {other:?} (always | group | never)")),
    }
}

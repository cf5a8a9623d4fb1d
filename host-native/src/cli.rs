//! The command line (contract §6.2 step 1).

use std::path::PathBuf;

use clap::Parser;

/// session-manager: durable, reactive, branching store of typed conversation entries (an iii
/// worker).
#[derive(Debug, Parser)]
#[command(name = "session-manager", version, about)]
pub struct Cli {
    /// WebSocket URL of the iii engine.
    #[arg(long, env = "III_URL", default_value = iii_sdk::DEFAULT_ENGINE_URL)]
    pub url: String,
    /// One-time seed of the stored configuration (YAML, `${VAR}` expanded); never overwrites a
    /// stored value.
    #[arg(long, value_name = "YAML")]
    pub config: Option<PathBuf>,
    /// When the fs store flushes to stable storage: `group` (default; every write is fsynced
    /// before its answer, concurrent writers share a flush), `always` (one fsync per write) or
    /// `never` (survives a process crash, not a power loss).
    #[arg(long, env = "SESSION_MANAGER_FS_SYNC", default_value = "group",
          value_parser = crate::runtime::parse_sync_mode)]
    pub fs_sync: crate::fs::SyncMode,
    /// Print the worker manifest (JSON) and exit without connecting.
    #[arg(long)]
    pub manifest: bool,
}

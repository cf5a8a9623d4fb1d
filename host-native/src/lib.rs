//! session-manager host: wires session-core to the iii engine and tokio over a store chosen by
//! its configuration — the fs, postgres or bridge store, each a crate of its own, known here only
//! through the core's `Store` and `Backend` traits except where [`runtime::Runtime::build`]
//! builds one.
//!
//! [`boot`] connects (waiting for the engine with [`engine_wait`]), reads the configuration
//! ([`config`], [`config_worker`]), registers the trigger types ([`triggers`]) and the catalog's
//! functions ([`functions`]), which run through [`worker::Worker`] on the live
//! [`runtime::Runtime`] and publish through the [`emitter`]; [`reload`] hot-reloads.

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

pub use session_store_bridge as bridge;
pub use session_store_fs as fs;
/// The postgres store (its own crate, `stores/postgres`).
pub use session_store_postgres as pg;

pub mod boot;
pub mod cli;
pub mod clock;
pub mod coalesce;
pub mod config;
pub mod config_worker;
pub mod emitter;
pub mod engine_wait;
pub mod erase;
pub mod formats;
pub mod functions;
pub mod locks;
pub mod manifest;
pub mod migrate;
pub mod nodelay;
pub mod offline;
pub mod open_files;
pub mod reload;
pub mod runtime;
pub mod seed;
pub mod sweeper;
pub mod telemetry;
pub mod transfer;
pub mod triggers;
pub mod worker;

pub use fs::{FsConfig, FsStore, SyncMode};

//! session-manager host: wires session-core to the iii engine, tokio and the fs / bridge stores.
//!
//! Today: the durable fs store ([`fs::FsStore`]). The worker and the bridge land in their own
//! issues.

pub mod fs;

pub use fs::{FsConfig, FsStore, SyncMode};

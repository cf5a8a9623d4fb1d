//! session-manager host: wires session-core to the iii engine, tokio and the fs / bridge stores.
//!
//! Skeleton: the worker, the fs store and the bridge land in their own issues.

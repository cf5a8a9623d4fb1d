//! `session-store-bridge`, the bridge adapter (contract §5.6–§5.8): storage through a main instance's `session::store::*`
//! protocol over a separate engine connection, and the relay that brings the main's event feed
//! back to this instance's local subscribers.
//!
//! * [`transport`]: the [`Transport`] seam (one protocol call → JSON reply or a [`TransportError`] that keeps the main's error code).
//! * [`store`]: [`BridgeStore`], the `session_core::Store` over a transport.
//! * [`link`]: [`Bridge`], the live connection to the main (transport, relay, publish, shutdown).
//! * [`relay`]: the relay function's name and handler (it hands the main's events to the host's
//!   [`EventSink`](session_core::EventSink)).
//! * [`loopback`]: a transport that serves the protocol in-process (tests, conformance).

mod config;
pub mod link;
pub mod loopback;
pub mod relay;
pub mod store;
pub mod transport;

pub use config::BridgeAdapterConfig;
pub use link::Bridge;
pub use store::BridgeStore;
pub use transport::{Transport, TransportError};

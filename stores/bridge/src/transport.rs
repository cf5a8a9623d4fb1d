//! The seam between [`BridgeStore`](super::BridgeStore) and the main: one synchronous
//! request/response call of a `session::store::*` function, failing with a [`TransportError`]
//! that keeps the main's error code.

use std::fmt;

use serde_json::Value;

/// Why a protocol call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The main answered with an error: its code (e.g. `session/not_found`) and wire message.
    Remote { code: String, message: String },
    /// No answer: the main is unreachable, the bridge is closed, or the call timed out.
    Unavailable(String),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Remote { message, .. } => f.write_str(message),
            TransportError::Unavailable(detail) => f.write_str(detail),
        }
    }
}

/// Calls protocol functions on the main. Implementations bound every call in time.
pub trait Transport: Send + Sync {
    /// Calls `function_id` with `payload` and returns its reply. Blocking: call it off the reactor.
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError>;
}

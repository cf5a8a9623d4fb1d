//! The seam between [`BridgeStore`](super::BridgeStore) and the main: one synchronous
//! request/response call of a `session::store::*` function, failing with plain text.

use serde_json::Value;

/// Calls protocol functions on the main. Implementations bound every call in time and turn every
/// failure (unreachable, timeout, remote error) into text; the store adds the function's name.
pub trait Transport: Send + Sync {
    /// Calls `function_id` with `payload` and returns its reply. Blocking: call it off the reactor.
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, String>;
}

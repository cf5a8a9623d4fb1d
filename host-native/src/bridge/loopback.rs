//! A [`Transport`] that serves the protocol in-process: each call runs the core's catalog
//! dispatcher on a local store, the way a main's handler would, and errors come back as their
//! code and wire message, as a main's do. Tests and the conformance suite run [`BridgeStore`](super::BridgeStore) over it.

use std::sync::Arc;

use serde_json::Value;
use session_core::catalog;
use session_core::{Env, Limits, ManualClock, SeqIds, Store};

use super::{Transport, TransportError};

/// Serves `session::store::*` from `store`.
#[derive(Clone)]
pub struct Loopback {
    pub store: Arc<dyn Store + Send + Sync>,
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Loopback")
    }
}

impl Transport for Loopback {
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError> {
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        catalog::call(&*self.store, &env, function_id, payload)
            .map(|outcome| outcome.response)
            .map_err(|e| TransportError::Remote {
                code: e.code.as_str().to_string(),
                message: e.message(),
            })
    }
}

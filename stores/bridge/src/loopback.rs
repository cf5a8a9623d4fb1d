//! A [`Transport`] that serves the protocol in-process: each call runs the core's catalog
//! dispatcher on a local store, the way a main's handler would, and errors come back as their
//! code and wire message, as a main's do. Tests and the conformance suite run [`BridgeStore`](super::BridgeStore) over it.

use std::sync::Arc;

use serde_json::Value;
use session_core::catalog;
use session_core::{Env, Limits, ManualClock, SeqIds, Store};

use super::store::FUNCTION_NOT_FOUND;
use super::{Transport, TransportError};

/// Serves `session::store::*` from `store`.
#[derive(Clone)]
pub struct Loopback {
    pub store: Arc<dyn Store + Send + Sync>,
    /// Serve only the seed's functions, as a v1.0.32 main (or ours with `--seed-only`) does: an
    /// extension answers the engine's `function_not_found`.
    pub seed_only: bool,
}

impl Loopback {
    /// A main serving every function of the catalog.
    pub fn new(store: Arc<dyn Store + Send + Sync>) -> Self {
        Loopback { store, seed_only: false }
    }
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Loopback")
    }
}

impl Transport for Loopback {
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError> {
        if self.seed_only && catalog::EXTENSIONS.iter().any(|op| op.id == function_id) {
            return Err(TransportError::Remote {
                code: FUNCTION_NOT_FOUND.into(),
                message: format!("function {function_id} not found"),
            });
        }
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

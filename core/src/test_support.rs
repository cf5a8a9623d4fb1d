//! Test support shared by the core's unit tests: a host over a `MemStore` (manual clock,
//! sequential ids, default limits) that runs catalog calls, and the assistant message the feed
//! tests stream into.

use serde_json::{json, Value};

use crate::{catalog, Env, Limits, ManualClock, MemStore, Outcome, SeqIds};

/// A `MemStore` with its clock and id source.
pub struct TestHost {
    pub clock: ManualClock,
    pub ids: SeqIds,
    pub store: MemStore,
}

impl TestHost {
    pub fn new() -> Self {
        TestHost { clock: ManualClock::new(), ids: SeqIds::new(), store: MemStore::new() }
    }

    /// The call environment (default limits).
    pub fn env(&self) -> Env<'_> {
        Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() }
    }

    /// Runs catalog function `id`; panics when it is unknown or fails.
    pub fn call(&self, id: &str, request: Value) -> Outcome<Value> {
        catalog::dispatch(&self.store, &self.env(), id, request).expect("in catalog").expect(id)
    }
}

/// An assistant message with one text block.
pub fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
        "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 0})
}

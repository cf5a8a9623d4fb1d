//! Test support shared by the core's unit tests: a host over a `MemStore` (manual clock,
//! sequential ids, default limits) that runs catalog calls, the assistant message the feed tests
//! stream into, and a session with one change of most kinds.

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

/// Session `s` (metadata `{owner: u}`) after five changes: created, an assistant message `e1`
/// ("a"), a delta ("b"), status `working`, title `t`.
pub fn busy_session(store: &MemStore, env: &Env<'_>) {
    let call = |id: &str, req: Value| {
        catalog::dispatch(store, env, id, req).expect("in catalog").expect(id);
    };
    call("session::ensure", json!({"session_id": "s", "metadata": {"owner": "u"}}));
    let msg = assistant("a");
    call("session::append", json!({"session_id": "s", "entry_id": "e1", "message": msg}));
    call("session::append-delta", json!({"session_id": "s", "entry_id": "e1", "text": "b"}));
    call("session::set-status", json!({"session_id": "s", "status": "working"}));
    call("session::set-meta", json!({"session_id": "s", "title": "t"}));
}

/// An assistant message with one text block.
pub fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
        "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 0})
}

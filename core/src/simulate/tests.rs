//! Simulation round trip: a session built through the public calls, logged the way the fs store
//! logs it, simulated back into a fresh store, ends in the same state.

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use serde_json::{json, Value};

use super::steps;
use crate::error::StoreError;
use crate::jsonl::{encode_records, encode_snapshot};
use crate::store::{plan_session_writes, Applied, ChangeSet, LogChange, Store};
use crate::test_support::assistant;
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};
use crate::{catalog, Env, Limits, ManualClock, MemStore, SeqIds};

/// A `MemStore` that also writes the session log of session `s_001` as the fs store would.
#[derive(Default)]
struct LoggedStore {
    mem: MemStore,
    log: RefCell<Vec<u8>>,
}

impl Store for LoggedStore {
    fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.mem.get_meta(sid)
    }
    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.mem.list_metas()
    }
    fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.mem.get_entry(sid, eid)
    }
    fn list_entries(&self, sid: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.mem.list_entries(sid)
    }
    fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, StoreError> {
        self.mem.get_active_leaf(sid)
    }
    fn get_attachment(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.mem.get_attachment(sid, aid)
    }
    fn list_attachments(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.mem.list_attachments(sid)
    }
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let state = self.mem.session_state(&changes.session_id);
        let (next, log, _) = plan_session_writes(&state, &changes.writes)?;
        match log {
            LogChange::None => {}
            LogChange::Append(records) => self.log.borrow_mut().extend(encode_records(&records)),
            LogChange::Rewrite => *self.log.borrow_mut() = encode_snapshot(&next),
        }
        self.mem.apply(changes)
    }
}

fn call(store: &dyn Store, clock: &ManualClock, ids: &SeqIds, id: &str, req: Value) -> Value {
    let env = Env { clock, ids, limits: Limits::default() };
    let outcome = catalog::dispatch(store, &env, id, req).expect("in catalog");
    outcome.unwrap_or_else(|e| panic!("{id}: {e}")).response
}

#[test]
fn simulating_a_log_rebuilds_the_session() {
    let (store, clock, ids) = (LoggedStore::default(), ManualClock::new(), SeqIds::new());
    let go = |id: &str, req: Value| {
        clock.advance(7);
        call(&store, &clock, &ids, id, req)
    };
    go("session::create", json!({ "title": "t", "metadata": { "owner": "u" } }));
    let user =
        json!({ "role": "user", "content": [{ "type": "text", "text": "hi" }], "timestamp": 0 });
    go("session::append", json!({ "session_id": "s_001", "message": user }));
    go(
        "session::append",
        json!({ "session_id": "s_001", "message": assistant(""), "origin": { "turn": 1 } }),
    );
    for text in ["He", "Hello"] {
        let content = json!([{ "type": "text", "text": text }]);
        go(
            "session::update-message",
            json!({ "session_id": "s_001", "entry_id": "e_002", "content": content }),
        );
    }
    go(
        "session::set-status",
        json!({ "session_id": "s_001", "status": "working", "reason": "thinking" }),
    );
    go(
        "session::append-many",
        json!({ "session_id": "s_001", "parent_id": "e_001",
        "messages": [assistant("other"), user] }),
    );
    go(
        "session::append",
        json!({ "session_id": "s_001", "custom": { "custom_type": "compaction", "data": 1 } }),
    );
    go("session::set-active-leaf", json!({ "session_id": "s_001", "entry_id": "e_002" }));
    go("session::set-meta", json!({ "session_id": "s_001", "title": "renamed" }));
    go("session::set-draft", json!({ "session_id": "s_001", "draft": "unsent" }));

    let log = store.log.borrow().clone();
    let plan = steps("s_001", &log);
    let functions: Vec<&str> = plan.iter().map(|s| s.function_id).collect();
    assert_eq!(functions.iter().filter(|f| **f == "session::update-message").count(), 2);
    let (replay, replay_clock, replay_ids) = (MemStore::new(), ManualClock::new(), SeqIds::new());
    for step in &plan {
        replay_clock.set(step.at);
        call(&replay, &replay_clock, &replay_ids, step.function_id, step.request.clone());
    }
    let (want, got) = (store.mem.session_state("s_001"), replay.session_state("s_001"));
    assert_eq!(got.entries, want.entries);
    assert_eq!(got.leaf, want.leaf);
    assert_eq!(got.meta, want.meta);

    // A snapshot has no history: the same entries come back at their final content.
    let snapshot = encode_snapshot(&want);
    let replay = MemStore::new();
    for step in steps("s_001", &snapshot) {
        replay_clock.set(step.at);
        call(&replay, &replay_clock, &replay_ids, step.function_id, step.request.clone());
    }
    let got = replay.session_state("s_001");
    assert_eq!(got.entries.keys().collect::<Vec<_>>(), want.entries.keys().collect::<Vec<_>>());
    assert_eq!(got.leaf, want.leaf);
}

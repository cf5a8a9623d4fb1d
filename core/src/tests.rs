//! Unit tests pinning the crate-level invariants that are not BDD scenarios (8, 9, 10).

use alloc::string::ToString;
use serde_json::json;

use crate::catalog;
use crate::error::{ErrorCode, SessionError, StoreError};
use crate::record::{Record, SessionState};
use crate::store::{Applied, ChangeSet, Store};
use crate::test_support::{assistant, busy_session, TestHost};
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};
use crate::{Env, Limits, ManualClock, MemStore, SeqIds};

/// A store whose every write fails, to check that no event escapes a failed write.
struct FailingStore(MemStore);

impl Store for FailingStore {
    fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.0.get_meta(sid)
    }
    fn list_metas(&self) -> Result<alloc::vec::Vec<SessionMeta>, StoreError> {
        self.0.list_metas()
    }
    fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.0.get_entry(sid, eid)
    }
    fn list_entries(&self, sid: &str) -> Result<alloc::vec::Vec<SessionEntry>, StoreError> {
        self.0.list_entries(sid)
    }
    fn get_active_leaf(&self, sid: &str) -> Result<Option<alloc::string::String>, StoreError> {
        self.0.get_active_leaf(sid)
    }
    fn get_attachment(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, alloc::vec::Vec<u8>)>, StoreError> {
        self.0.get_attachment(sid, aid)
    }
    fn list_attachments(&self, sid: &str) -> Result<alloc::vec::Vec<AttachmentMeta>, StoreError> {
        self.0.list_attachments(sid)
    }
    fn apply(&self, _changes: &ChangeSet) -> Result<Applied, StoreError> {
        Err(StoreError::Io("disk full".into()))
    }
}

#[test]
fn events_need_a_landed_write() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let store = FailingStore(MemStore::new());
    let result = catalog::dispatch(&store, &env, "session::create", json!({}))
        .expect("create is in the catalog");
    let error = result.expect_err("a failed write must fail the call");
    assert_eq!(error.code, ErrorCode::Storage);
    assert_eq!(store.list_metas().map(|m| m.len()), Ok(0));
}

#[test]
fn messages_start_with_code() {
    for code in ErrorCode::ALL {
        let message = SessionError::new(code, "details").to_string();
        assert!(message.starts_with(&alloc::format!("{}: ", code.as_str())), "{message}");
        assert!(code.as_str().starts_with("session/"));
        assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
    }
}

#[test]
fn snapshot_replays_to_same_state() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let store = MemStore::new();
    let call = |id: &str, payload| {
        catalog::dispatch(&store, &env, id, payload).expect("known").expect("call succeeds")
    };
    call("session::ensure", json!({"session_id": "s"}));
    let text =
        |t: &str| json!({"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1});
    call("session::append", json!({"session_id": "s", "message": text("a")}));
    call("session::append", json!({"session_id": "s", "message": text("b")}));
    call("session::append-many", json!({"session_id": "s", "messages": [text("c"), text("d")]}));
    call("session::update-message", json!({"session_id": "s", "entry_id": "e_001", "content": []}));
    call("session::set-active-leaf", json!({"session_id": "s", "entry_id": "e_002"}));
    let state = store.session_state("s");
    let mut replayed = SessionState::default();
    for record in state.snapshot_records() {
        replayed.apply(&record);
    }
    assert_eq!(replayed.meta, state.meta);
    assert_eq!(replayed.entries, state.entries);
    assert_eq!(replayed.leaf, state.leaf);
    assert_eq!(replayed.committed, state.committed);
    assert_eq!(state.committed.len(), 4, "every append and append-many entry is committed");
}

/// Found by the npm package's consumer test: a deterministic workspace that loaded a file holding
/// `e_001` drew `e_001` for its next append, which then passed for that entry's replay (nothing
/// written) — and `append-many` replaced the loaded entry. A generated id now skips taken ones.
#[test]
fn generated_entry_ids_skip_ids_the_session_holds() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let store = MemStore::new();
    let call = |id: &str, payload| {
        catalog::dispatch(&store, &env, id, payload).expect("known").expect("call succeeds")
    };
    let text =
        |t: &str| json!({"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1});
    call("session::ensure", json!({"session_id": "s"}));
    for (id, t) in [("e_001", "loaded 1"), ("e_002", "loaded 2"), ("e_004", "loaded 4")] {
        call("session::append", json!({"session_id": "s", "entry_id": id, "message": text(t)}));
    }
    let one = call("session::append", json!({"session_id": "s", "message": text("new")}));
    assert_eq!(one.response["entry_id"], "e_003");
    let many = call(
        "session::append-many",
        json!({"session_id": "s", "messages": [text("x"), text("y")]}),
    );
    assert_eq!(many.response["entry_ids"], json!(["e_005", "e_006"]));
    let entries = store.list_entries("s").expect("lists");
    assert_eq!(entries.len(), 6);
    let loaded = store.get_entry("s", "e_004").expect("reads").expect("kept");
    assert_eq!(
        serde_json::to_value(&loaded).expect("encodes")["message"]["content"][0]["text"],
        "loaded 4"
    );
    assert_eq!(store.get_meta("s").expect("reads").expect("exists").message_count, 6);
}

#[test]
fn legacy_three_line_append_commits_on_meta() {
    let meta: SessionMeta = serde_json::from_value(json!({
        "session_id": "s", "title": "", "description": "", "status": "idle",
        "created_at": 1, "updated_at": 1, "message_count": 0
    }))
    .expect("meta");
    let entry: SessionEntry = serde_json::from_value(json!({
        "kind": "custom", "id": "e1", "parent_id": null, "timestamp": 1, "custom_type": "x"
    }))
    .expect("entry");
    let mut state = SessionState::default();
    for record in [
        Record::Meta { meta: meta.clone() },
        Record::Entry { entry },
        Record::Leaf { entry_id: Some("e1".into()) },
    ] {
        state.apply(&record);
    }
    assert!(state.committed.is_empty(), "half-written legacy append is not committed");
    state.apply(&Record::Meta { meta });
    assert!(state.committed.contains("e1"), "the meta line completes the legacy append");
    assert_eq!(SessionMeta::clone(state.meta.as_ref().expect("meta")).kind, Default::default());
}

/// Live sync: every event gets the session's next seq, an idempotent append replay gets none, an
/// `append-delta` records the compact delta, a delete takes the feed with it and a re-created id
/// starts a new epoch at seq 1.
#[test]
fn feed_seqs_follow_the_events() {
    let host = TestHost::new();
    let (store, env) = (&host.store, host.env());
    let call = |id: &str, req: serde_json::Value| host.call(id, req);
    let seqs = |outcome: &crate::Outcome<serde_json::Value>| {
        outcome
            .events
            .iter()
            .map(|e| e.change.as_ref().map(|c| c.seq))
            .collect::<alloc::vec::Vec<_>>()
    };
    let created = call("session::ensure", json!({"session_id": "s"}));
    assert_eq!(seqs(&created), [Some(1)]);
    let msg = assistant("He");
    let append = json!({"session_id": "s", "entry_id": "e1", "message": msg});
    assert_eq!(seqs(&call("session::append", append.clone())), [Some(2)]);
    assert!(call("session::append", append).events.is_empty(), "a replay fires nothing");
    let delta =
        call("session::append-delta", json!({"session_id": "s", "entry_id": "e1", "text": "llo"}));
    assert_eq!(delta.response, json!({"updated": true, "revision": 1}));
    assert_eq!(seqs(&delta), [Some(3)]);
    let change = delta.events[0].change.clone().expect("change");
    assert_eq!(change.change_type, crate::feed::MESSAGE_DELTA);
    assert_eq!(
        change.payload,
        json!({"session_id": "s", "entry_id": "e1", "revision": 1,
        "block_index": 0, "text": "llo"})
    );
    let text = &delta.events[0].event.payload()["message"]["content"][0]["text"];
    assert_eq!(text, "Hello", "seed subscribers get the full message");
    let thinking = call(
        "session::append-delta",
        json!({"session_id": "s", "entry_id": "e1", "thinking": "hm"}),
    );
    assert_eq!(
        thinking.events[0].change.as_ref().map(|c| c.payload["block_index"].clone()),
        Some(json!(1))
    );
    let first_epoch = created.events[0].change.as_ref().and_then(|c| c.epoch.clone());
    assert!(first_epoch.is_some(), "a creation starts an epoch");
    let deleted = call("session::delete", json!({"session_id": "s"}));
    assert_eq!(seqs(&deleted), [Some(5)]);
    let gone = deleted.events[0].changed_event().expect("the delete's change");
    assert_eq!(gone.epoch, first_epoch, "the delete is the epoch's last change");
    let page = call("session::changes", json!({"session_id": "s"})).response;
    assert_eq!(
        page,
        json!({"session_id": "s", "changes": [], "latest_seq": 0,
        "next_after_seq": null, "truncated": false}),
        "a deleted session leaves no feed"
    );
    let again = call("session::ensure", json!({"session_id": "s"}));
    assert_eq!(seqs(&again), [Some(1)]);
    let second_epoch = again.events[0].change.as_ref().and_then(|c| c.epoch.clone());
    assert!(second_epoch.is_some() && second_epoch != first_epoch, "a new epoch");
    let page = call("session::changes", json!({"session_id": "s"})).response;
    assert_eq!(page["epoch"], json!(second_epoch));
    assert_eq!(page["changes"][0]["epoch"], json!(second_epoch));
    let bad = catalog::dispatch(
        store,
        &env,
        "session::append-delta",
        json!({"session_id": "s", "entry_id": "e1", "text": "a", "thinking": "b"}),
    )
    .expect("in catalog");
    assert_eq!(bad.map(|_| ()).map_err(|e| e.code), Err(ErrorCode::InvalidRequest));
}

/// The feed rebuilds a replica that agrees with the store; duplicates and gaps are told apart.
#[test]
fn a_replica_rebuilt_from_the_feed_agrees_with_the_store() {
    use crate::replica::{Replica, Step};
    let host = TestHost::new();
    let store = &host.store;
    let call = |id: &str, req: serde_json::Value| host.call(id, req).response;
    busy_session(store, &host.env());
    call("session::append", json!({"session_id": "s", "custom": {"custom_type": "c", "data": 1}}));
    let page = call("session::changes", json!({"session_id": "s"}));
    let changes: alloc::vec::Vec<crate::wire::Change> =
        serde_json::from_value(page["changes"].clone()).expect("changes");
    let mut replica = Replica::new("s");
    assert_eq!(replica.apply(&changes[1]), Step::Gap { after_seq: 0 });
    for change in &changes {
        assert_eq!(replica.apply(change), Step::Applied, "{change:?}");
    }
    assert_eq!(replica.apply(&changes[0]), Step::Duplicate);
    assert_eq!(replica.differs_from(&store.session_state("s")), None);
    call(
        "session::update-message",
        json!({"session_id": "s", "entry_id": "e1",
        "content": [{"type": "text", "text": "z"}]}),
    );
    assert!(replica.differs_from(&store.session_state("s")).is_some(), "a missed change shows");
}

/// An append's feed change leaves its payload out of the log and replay rebuilds it (a delta's:
/// `live_sync.feature`, "a delta of another kind …", reads the feed after a restart).
#[test]
fn derived_change_payloads_replay_to_the_same_feed() {
    let host = TestHost::new();
    let (store, env) = (&host.store, host.env());
    let call = |id: &str, req: serde_json::Value| host.call(id, req);
    call("session::ensure", json!({"session_id": "s"}));
    let msg = assistant("a");
    call("session::append", json!({"session_id": "s", "entry_id": "e1", "message": msg}));
    call("session::append-delta", json!({"session_id": "s", "entry_id": "e1", "text": "bc"}));
    let state = store.session_state("s");
    assert_eq!(state.feed.len(), 3);
    let mut planned = SessionState::default();
    let writes = [
        crate::Write::PutMeta(state.meta.clone().expect("meta")),
        crate::Write::CommitAppend { entry: state.entries["e1"].clone(), parent_explicit: false },
        env.feed_write(alloc::vec![crate::feed::PendingChange::CommittedAppend]),
    ];
    let (log, _) = crate::store::plan_session_writes_in_place(&mut planned, &writes).expect("plan");
    let crate::store::LogChange::Append(records) = log else { panic!("an append") };
    let payloadless = records
        .iter()
        .filter(|r| matches!(r, Record::Change { change } if change.payload.is_none()))
        .count();
    assert_eq!(payloadless, 1, "the append's change line has no payload");
    let (replayed, _) = crate::jsonl::replay(&crate::jsonl::encode_records(&records));
    assert_eq!(replayed.feed, planned.feed, "and replay rebuilds it");
}

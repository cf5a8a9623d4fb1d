//! `BridgeStore` over in-process transports: the storage conformance suite through the protocol
//! (a loopback that dispatches `session::store::*` on a `MemStore`), every failure naming its
//! protocol function, the honest non-atomicity of a multi-write change set, and the relay.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use session_core::conformance::{message_entry, run_all, sample_meta, CHECKS};
use session_core::{ChangeSet, ErrorCode, MemStore, SessionError, Store, StoreError, Write};
use session_manager::bridge::loopback::Loopback;
use session_manager::bridge::{BridgeStore, Transport, TransportError};

fn bridged() -> (Arc<MemStore>, BridgeStore) {
    let main = Arc::new(MemStore::new());
    let store = BridgeStore::new(Arc::new(Loopback { store: main.clone() }));
    (main, store)
}

/// Every conformance check but atomicity, which the seed's protocol cannot give (no batch call).
#[test]
fn bridge_store_is_conformant_except_atomicity() {
    let failures = run_all(&|| Box::new(bridged().1));
    let failures: Vec<&String> =
        failures.iter().filter(|f| !f.starts_with("change_set_is_atomic:")).collect();
    assert!(failures.is_empty(), "conformance failures:\n{failures:#?}");
    assert!(CHECKS.iter().any(|(name, _)| *name == "change_set_is_atomic"));
}

/// Writes go one protocol call each and stop at the first failure; earlier ones stay.
#[test]
fn a_failing_change_set_keeps_the_writes_before_the_failure() {
    let (main, store) = bridged();
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).unwrap();
    let changes = ChangeSet::new("s")
        .with(Write::PutEntry(message_entry("x", None, 2, "x")))
        .with(Write::CommitAppend {
            entry: message_entry("y", Some("nope"), 3, "y"),
            parent_explicit: true,
        })
        .with(Write::PutEntry(message_entry("z", None, 4, "z")));
    let err = store.apply(&changes).unwrap_err();
    let StoreError::Remote { function, code, .. } = &err else { panic!("not Remote: {err:?}") };
    assert_eq!(
        (function.as_str(), *code),
        ("session::store::commit-append", Some(ErrorCode::Storage))
    );
    assert!(main.get_entry("s", "x").unwrap().is_some(), "the write before the failure landed");
    assert!(main.get_entry("s", "z").unwrap().is_none(), "nothing after the failure was sent");
}

type Reply = Box<dyn Fn(&str) -> Result<Value, TransportError> + Send + Sync>;

/// Records calls and answers from a script.
struct Scripted {
    calls: Mutex<Vec<(String, Value)>>,
    reply: Reply,
}

impl Transport for Scripted {
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError> {
        self.calls.lock().unwrap().push((function_id.to_string(), payload));
        (self.reply)(function_id)
    }
}

fn scripted(
    reply: impl Fn(&str) -> Result<Value, TransportError> + Send + Sync + 'static,
) -> (Arc<Scripted>, BridgeStore) {
    let t = Arc::new(Scripted { calls: Mutex::default(), reply: Box::new(reply) });
    (t.clone(), BridgeStore::new(t))
}

/// Every failure is typed (unavailable main, unusable reply, the main's own error with its code),
/// names the protocol function, and reaches callers as `session/storage` (contract §5.6).
#[test]
fn every_failure_is_typed_names_the_protocol_function_and_is_storage() {
    let unreachable = || TransportError::Unavailable("main engine at ws://m unreachable".into());
    let (_, down) = scripted(move |_| Err(unreachable()));
    let err = down.get_meta("s").unwrap_err();
    assert_eq!(
        err,
        StoreError::Unavailable {
            function: "session::store::get-meta".into(),
            detail: "main engine at ws://m unreachable".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "bridge session::store::get-meta failed: main engine at ws://m unreachable"
    );
    assert_eq!(SessionError::from(err).code, ErrorCode::Storage);

    let (_, garbage) = scripted(|_| Ok(json!({"metas": 5})));
    let err = garbage.list_metas().unwrap_err();
    let StoreError::Remote { function, code: None, message } = &err else {
        panic!("not an unusable reply: {err:?}")
    };
    assert_eq!(function, "session::store::list-metas");
    assert!(message.starts_with("undecodable reply"), "{message}");

    let disk_full = || TransportError::Remote {
        code: "session/storage".into(),
        message: "session/storage: disk full".into(),
    };
    let (_, remote) = scripted(move |_| Err(disk_full()));
    let err = remote.list_entries("s").unwrap_err();
    assert_eq!(
        err,
        StoreError::Remote {
            function: "session::store::list-entries".into(),
            code: Some(ErrorCode::Storage),
            message: "session/storage: disk full".into(),
        }
    );
    let wire = SessionError::from(err);
    assert_eq!(wire.code, ErrorCode::Storage);
    assert_eq!(
        wire.message(),
        "session/storage: bridge session::store::list-entries failed: session/storage: disk full"
    );

    let (_, refused) = scripted(|_| Ok(json!({"ok": false})));
    let err = refused.apply(&ChangeSet::new("s").with(Write::DeleteMeta)).unwrap_err();
    assert!(
        matches!(&err, StoreError::Remote { function, code: None, .. } if function == "session::store::delete-meta"),
        "{err:?}"
    );
}

#[test]
fn writes_map_to_one_protocol_call_each() {
    let (t, store) = scripted(|id| {
        Ok(match id {
            "session::store::delete-attachment" => json!({"deleted": true}),
            _ => json!({"ok": true}),
        })
    });
    let changes = ChangeSet::new("s")
        .with(Write::PutEntry(message_entry("a", None, 1, "a")))
        .with(Write::SetActiveLeaf("a".into()))
        .with(Write::PutMeta(sample_meta("s", 1)))
        .with(Write::DeleteAttachment("a_1".into()))
        .with(Write::DeleteAttachments)
        .with(Write::DeleteEntries)
        .with(Write::DeleteActiveLeaf)
        .with(Write::DeleteMeta);
    let applied = store.apply(&changes).unwrap();
    assert_eq!(applied.attachments_deleted, vec![true]);
    let calls = t.calls.lock().unwrap();
    let ids: Vec<&str> =
        calls.iter().map(|(id, _)| id.trim_start_matches("session::store::")).collect();
    assert_eq!(
        ids,
        [
            "put-entry",
            "set-active-leaf",
            "put-meta",
            "delete-attachment",
            "delete-attachments",
            "delete-entries",
            "delete-active-leaf",
            "delete-meta"
        ]
    );
    assert_eq!(calls[1].1, json!({"session_id": "s", "entry_id": "a"}));
    assert_eq!(calls[3].1, json!({"session_id": "s", "attachment_id": "a_1"}));
}

#[test]
fn attachments_cross_as_base64_and_meta_reads_skip_the_bytes() {
    let (main, store) = bridged();
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).unwrap();
    let meta = session_core::conformance::attachment_meta("s", "a_1", b"hello");
    let put = Write::PutAttachment { meta: meta.clone(), bytes: b"hello".to_vec() };
    store.apply(&ChangeSet::new("s").with(put)).unwrap();
    assert_eq!(main.get_attachment("s", "a_1").unwrap(), Some((meta.clone(), b"hello".to_vec())));
    assert_eq!(store.get_attachment("s", "a_1").unwrap(), Some((meta.clone(), b"hello".to_vec())));
    assert_eq!(store.get_attachment_meta("s", "a_1").unwrap(), Some(meta));
    assert_eq!(store.get_attachment_meta("s", "a_2").unwrap(), None);
}

/// The domain logic runs on the bridge; the main only stores: a whole call sequence through the
/// catalog over a `BridgeStore` lands in the main's store.
#[test]
fn public_functions_run_over_the_bridge() {
    use session_core::{catalog, Env, Limits, ManualClock, SeqIds};
    let (main, store) = bridged();
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let call = |id: &str, p: Value| catalog::call(&store, &env, id, p).unwrap();
    let sid = call("session::create", json!({"title": "t"})).response["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let msg = json!({"role": "user", "content": [], "timestamp": 1});
    let added = call("session::append", json!({"session_id": sid, "message": msg}));
    assert_eq!(added.events.len(), 1);
    call("session::append", json!({"session_id": sid, "message": msg}));
    assert_eq!(main.get_meta(&sid).unwrap().unwrap().message_count, 2);
    assert_eq!(main.list_entries(&sid).unwrap().len(), 2);
    let deleted = call("session::delete", json!({"session_id": sid}));
    assert_eq!(deleted.response["deleted"], true);
    assert!(main.list_metas().unwrap().is_empty());
}

//! `BridgeStore` over in-process transports: the storage conformance suite through the protocol
//! (a loopback that dispatches `session::store::*` on a `MemStore`, as our main or as a seed main),
//! every failure typed and naming its protocol function, atomic change sets through
//! `session::store::apply` and the honest non-atomicity of the seed-protocol fallback.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use session_core::conformance::{message_entry, run_all, sample_meta, CHECKS};
use session_core::{ChangeSet, ErrorCode, MemStore, SessionError, Store, StoreError, Write};
use session_store_bridge::loopback::Loopback;
use session_store_bridge::store::FUNCTION_NOT_FOUND;
use session_store_bridge::{BridgeStore, Transport, TransportError};

/// A bridge to a main of ours (serving `session::store::apply`).
fn bridged() -> (Arc<MemStore>, BridgeStore) {
    let main = Arc::new(MemStore::new());
    let store = BridgeStore::new(Arc::new(Loopback::new(main.clone())));
    (main, store)
}

/// A bridge to a main that serves only the seed's protocol (v1.0.32, or ours `--seed-only`).
fn bridged_to_seed_main() -> (Arc<MemStore>, BridgeStore) {
    let main = Arc::new(MemStore::new());
    let loopback = Loopback { store: main.clone(), seed_only: true };
    (main, BridgeStore::new(Arc::new(loopback)))
}

/// Against our main every conformance check holds, atomicity included (`session::store::apply`):
/// one test per check (`conformance::<check>`).
mod conformance {
    session_core::conformance_tests!(|| Box::new(super::bridged().1) as Box<dyn super::Store>);
}

/// Against a seed main every check but atomicity, which the seed's protocol cannot give, the
/// feed and the lifecycle, which a seed main does not keep (each `feed_*` and `lifecycle_*` check
/// fails; reading them says why). The context check fails where its script streams a delta
/// (`session::append-delta` writes through `session::store::apply`, which a seed main lacks), the
/// search check where it trashes a session, its last step.
#[test]
fn bridge_store_to_a_seed_main_is_conformant_except_atomicity_feed_and_lifecycle() {
    let failures = run_all(&|| Box::new(bridged_to_seed_main().1));
    let (context, failures): (Vec<String>, Vec<String>) =
        failures.into_iter().partition(|f| f.starts_with("context_matches_oracle:"));
    // The search check trashes a session last: every hit before that holds.
    let (search, failures): (Vec<String>, Vec<String>) =
        failures.into_iter().partition(|f| f.starts_with("search_hits:"));
    assert!(
        search.len() == 1
            && search[0].starts_with(
                "search_hits: trash: session/storage: trash, restore and expiry need a main"
            ),
        "the search check fails only where it trashes: {search:#?}"
    );
    let delta_refused = "session::append-delta needs a main that serves session::store::apply";
    assert!(
        context.len() == 1 && context[0].contains(delta_refused),
        "the context check fails only on a delta: {context:#?}"
    );
    let (lifecycle, failures): (Vec<&String>, Vec<&String>) =
        failures.iter().partition(|f| f.starts_with("lifecycle_"));
    let lifecycle_checks = CHECKS.iter().filter(|(name, _)| name.starts_with("lifecycle_")).count();
    assert_eq!(lifecycle.len(), lifecycle_checks, "every lifecycle check fails: {lifecycle:#?}");
    let err = bridged_to_seed_main().1.list_lifecycles().expect_err("a seed main keeps none");
    assert!(matches!(err, StoreError::Unsupported(_)), "{err:?}");
    let (feed, failures): (Vec<&String>, Vec<&String>) =
        failures.into_iter().partition(|f| f.starts_with("feed_"));
    let failures: Vec<&String> =
        failures.into_iter().filter(|f| !f.starts_with("change_set_is_atomic:")).collect();
    assert!(failures.is_empty(), "conformance failures:\n{failures:#?}");
    assert!(CHECKS.iter().any(|(name, _)| *name == "change_set_is_atomic"));
    let feed_checks = CHECKS.iter().filter(|(name, _)| name.starts_with("feed_")).count();
    assert_eq!(feed.len(), feed_checks, "every feed check fails against a seed main: {feed:#?}");
    // What a reader sees: a clear refusal, not an empty feed.
    let store = bridged_to_seed_main().1;
    let err = store.changes("s", 0, 10).expect_err("a seed main keeps no feed");
    assert!(err.to_string().contains("keeps no change feed"), "{err}");
    assert!(matches!(err, StoreError::Unsupported(_)), "{err:?}");
}

/// The change set of the next two tests: its commit fails (unknown parent), after a put-entry.
fn failing_change_set() -> ChangeSet {
    ChangeSet::new("s")
        .with(Write::PutEntry(message_entry("x", None, 2, "x")))
        .with(Write::CommitAppend {
            entry: message_entry("y", Some("nope"), 3, "y"),
            parent_explicit: true,
        })
        .with(Write::PutEntry(message_entry("z", None, 4, "z")))
}

/// Against our main a failing change set lands nothing: one atomic apply.
#[test]
fn a_failing_change_set_lands_nothing_on_our_main() {
    let (main, store) = bridged();
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).unwrap();
    let err = store.apply(&failing_change_set()).unwrap_err();
    let StoreError::Remote { function, code, .. } = &err else { panic!("not Remote: {err:?}") };
    assert_eq!((function.as_str(), *code), ("session::store::apply", Some(ErrorCode::Storage)));
    assert!(main.get_entry("s", "x").unwrap().is_none(), "nothing of the change set landed");
}

/// Against a seed main writes go one protocol call each and stop at the first failure; earlier
/// ones stay.
#[test]
fn a_failing_change_set_keeps_the_writes_before_the_failure_on_a_seed_main() {
    let (main, store) = bridged_to_seed_main();
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).unwrap();
    let err = store.apply(&failing_change_set()).unwrap_err();
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

/// Against a seed main (no `session::store::apply`), each write is one seed call; the bridge asks
/// for `apply` once and then stops asking.
#[test]
fn writes_map_to_one_protocol_call_each_on_a_seed_main() {
    let (t, store) = scripted(|id| match id {
        "session::store::apply" => Err(TransportError::Remote {
            code: FUNCTION_NOT_FOUND.into(),
            message: "function session::store::apply not found".into(),
        }),
        "session::store::delete-attachment" => Ok(json!({"deleted": true})),
        _ => Ok(json!({"ok": true})),
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
    store.apply(&changes).unwrap();
    let calls = t.calls.lock().unwrap();
    let ids: Vec<&str> =
        calls.iter().map(|(id, _)| id.trim_start_matches("session::store::")).collect();
    assert_eq!(ids.len(), 2 + 2 * 8, "{ids:?}");
    assert_eq!(ids[10..], ids[2..10], "the second change set did not ask for apply again");
    assert_eq!(
        ids[..10],
        [
            "apply",
            "get-meta",
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
    assert_eq!(calls[3].1, json!({"session_id": "s", "entry_id": "a"}));
    assert_eq!(calls[5].1, json!({"session_id": "s", "attachment_id": "a_1"}));
}

/// A main of ours that is down (killed, restarting) answers `function_not_found` for every
/// function, the seed's included: a change set then fails, retryable, with nothing sent (no
/// one-call-per-write fallback, which would not be all-or-nothing), and the next one asks for
/// `apply` again once the main is back.
#[test]
fn a_main_that_is_down_fails_a_change_set_and_is_not_taken_for_a_seed_main() {
    let up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (t, store) = scripted({
        let up = up.clone();
        move |id| {
            if !up.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(TransportError::Remote {
                    code: FUNCTION_NOT_FOUND.into(),
                    message: format!("function {id} not found"),
                });
            }
            Ok(json!({"commit": null, "attachments_deleted": []}))
        }
    });
    let changes = ChangeSet::new("s")
        .with(Write::PutEntry(message_entry("a", None, 1, "a")))
        .with(Write::PutMeta(sample_meta("s", 1)));
    let err = store.apply(&changes).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(err.to_string().contains("down or restarting"), "{err}");
    assert_eq!(SessionError::from(err).code, ErrorCode::Storage);
    up.store(true, std::sync::atomic::Ordering::SeqCst);
    store.apply(&changes).unwrap();
    let calls = t.calls.lock().unwrap();
    let ids: Vec<&str> =
        calls.iter().map(|(id, _)| id.trim_start_matches("session::store::")).collect();
    assert_eq!(ids, ["apply", "get-meta", "apply"], "no write was sent while the main was down");
}

/// Against our main a multi-write change set is one `session::store::apply` call carrying every
/// write in order, and its reply reports the commit and the deleted attachments; a single write
/// stays a seed call.
#[test]
fn a_change_set_is_one_apply_call_on_our_main() {
    let (t, store) = scripted(|id| {
        Ok(match id {
            "session::store::apply" => json!({"commit": null, "attachments_deleted": [false]}),
            _ => json!({"ok": true}),
        })
    });
    let changes = ChangeSet::new("s")
        .with(Write::SetActiveLeaf("a".into()))
        .with(Write::DeleteAttachment("a_1".into()));
    assert_eq!(store.apply(&changes).unwrap().attachments_deleted, vec![false]);
    store.apply(&ChangeSet::new("s").with(Write::DeleteMeta)).unwrap();
    let calls = t.calls.lock().unwrap();
    let ids: Vec<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["session::store::apply", "session::store::delete-meta"]);
    assert_eq!(
        calls[0].1,
        json!({"session_id": "s", "writes": [
            {"type": "set_active_leaf", "entry_id": "a"},
            {"type": "delete_attachment", "attachment_id": "a_1"},
        ]})
    );
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

/// Passes every call to a loopback main and records the function ids.
struct Counted {
    main: Loopback,
    calls: Mutex<Vec<String>>,
}

impl Transport for Counted {
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError> {
        self.calls.lock().unwrap().push(function_id.trim_start_matches("session::store::").into());
        self.main.call(function_id, payload)
    }
}

/// A main holding session `s`: a chain of 30 messages `e0` → `e29`, the active leaf at `e29`.
fn chained_main() -> Arc<MemStore> {
    let main = Arc::new(MemStore::new());
    let mut changes = ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)));
    for n in 0..30 {
        let parent = (n > 0).then(|| format!("e{}", n - 1));
        let entry = message_entry(&format!("e{n}"), parent.as_deref(), n + 2, "hi");
        changes.push(Write::PutEntry(entry));
    }
    changes.push(Write::SetActiveLeaf("e29".into()));
    main.apply(&changes).unwrap();
    main
}

fn counted(main: &Arc<MemStore>, seed_only: bool) -> (Arc<Counted>, BridgeStore) {
    let main = Loopback { store: main.clone(), seed_only };
    let t = Arc::new(Counted { main, calls: Mutex::default() });
    (t.clone(), BridgeStore::new(t))
}

/// Against our main a window of the path and an entry's spot cost one call each (issue 12), and
/// answer what the main's own store answers.
#[test]
fn a_path_window_is_one_call_on_our_main() {
    use session_core::path::PathSelect;
    use session_core::path_index::EntryClasses;
    let main = chained_main();
    let (t, store) = counted(&main, false);
    let query = PathSelect { classes: EntryClasses::MESSAGES, from: 10, backward: false, limit: 5 };
    let window = store.path_select("s", "e29", &query).unwrap();
    assert_eq!(window, main.path_select("s", "e29", &query).unwrap());
    assert_eq!(window.iter().map(|(at, _)| *at).collect::<Vec<_>>(), [10, 11, 12, 13, 14]);
    let back = PathSelect { backward: true, ..query };
    assert_eq!(
        store.path_select("s", "e29", &back).unwrap(),
        main.path_select("s", "e29", &back).unwrap()
    );
    let spot = store.path_locate("s", "e29", Some("e7")).unwrap();
    assert_eq!(spot, main.path_locate("s", "e29", Some("e7")).unwrap());
    assert_eq!((spot.len, spot.at.map(|(at, _)| at)), (30, Some(7)));
    assert_eq!(store.path_locate("s", "e29", Some("nope")).unwrap().at, None);
    assert_eq!(
        *t.calls.lock().unwrap(),
        ["path-select", "path-select", "path-locate", "path-locate"]
    );
}

/// A seed main does not serve the windows: the bridge walks the chain with `get-entry` calls,
/// gets the same answers, and does not ask for the window again on the next read.
#[test]
fn a_seed_main_s_path_is_walked_and_the_window_asked_for_once() {
    use session_core::path::PathSelect;
    use session_core::path_index::EntryClasses;
    let main = chained_main();
    let (t, store) = counted(&main, true);
    let query = PathSelect { classes: EntryClasses::ALL, from: 25, backward: false, limit: 10 };
    let want = main.path_select("s", "e29", &query).unwrap();
    assert_eq!(store.path_select("s", "e29", &query).unwrap(), want);
    assert_eq!(store.path_select("s", "e29", &query).unwrap(), want);
    assert_eq!(
        store.path_locate("s", "e29", Some("e3")).unwrap(),
        main.path_locate("s", "e29", Some("e3")).unwrap()
    );
    let calls = t.calls.lock().unwrap();
    let asked = |id: &str| calls.iter().filter(|c| *c == id).count();
    assert_eq!((asked("path-select"), asked("path-locate")), (1, 1), "{calls:?}");
    assert_eq!(asked("get-entry"), 3 * 30, "each read walks the 30-entry chain: {calls:?}");
}

/// A broken chain is the main's error through the window, as through a walk.
#[test]
fn a_broken_chain_fails_the_window_on_our_main() {
    use session_core::path::PathSelect;
    use session_core::path_index::EntryClasses;
    let main = chained_main();
    main.apply(&ChangeSet::new("s").with(Write::PutEntry(message_entry(
        "x",
        Some("gone"),
        99,
        "hi",
    ))))
    .unwrap();
    let (_, store) = counted(&main, false);
    let query = PathSelect { classes: EntryClasses::ALL, from: 0, backward: false, limit: 5 };
    let err = store.path_select("s", "x", &query).unwrap_err();
    assert!(err.to_string().contains("path-select") && err.to_string().contains("gone"), "{err}");
    assert!(store.path_locate("s", "x", None).is_err());
}

/// A main holding sessions `s0` … `s9`, created at 0 … 9; the even ones `{"team": "a"}`.
fn listed_main() -> Arc<MemStore> {
    let main = Arc::new(MemStore::new());
    for n in 0..10 {
        let sid = format!("s{n}");
        let mut meta = sample_meta(&sid, n);
        if n % 2 == 0 {
            meta.metadata = Some([("team".to_string(), json!("a"))].into_iter().collect());
        }
        main.apply(&ChangeSet::new(sid).with(Write::PutMeta(meta))).unwrap();
    }
    main
}

/// Against our main a filtered list page is one `list-page` call (issue 12), the main's own
/// answer; a seed main gets one `list-metas` sorted and filtered by the bridge, the same page,
/// and is not asked for `list-page` again on the next read.
#[test]
fn a_list_page_is_one_call_on_our_main_and_a_sort_on_a_seed_main() {
    use session_core::meta_order::{ListFilter, ListQuery};
    use session_core::wire::ListOrder;
    let main = listed_main();
    let team: serde_json::Map<String, Value> =
        [("team".to_string(), json!("a"))].into_iter().collect();
    let filter = ListFilter { metadata: Some(&team), ..ListFilter::default() };
    let query =
        ListQuery { order: ListOrder::CreatedDesc, after: Some((8, "s8")), filter, limit: 2 };
    let want = main.list_page(&query).unwrap();
    let ids: Vec<&str> = want.iter().map(|m| m.session_id.as_str()).collect();
    assert_eq!(ids, ["s6", "s4"], "the filtered page after s8, newest first");
    for seed_only in [false, true] {
        let (t, store) = counted(&main, seed_only);
        assert_eq!(store.list_page(&query).unwrap(), want);
        assert_eq!(store.list_page(&query).unwrap(), want);
        let calls = t.calls.lock().unwrap();
        let expected: &[&str] = match seed_only {
            false => &["list-page", "list-page"],
            true => &["list-page", "get-meta", "list-metas", "list-metas"],
        };
        assert_eq!(*calls, expected, "seed_only {seed_only}");
    }
}

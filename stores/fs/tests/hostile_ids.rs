//! Hostile ids and payloads against the fs store, end to end through the catalog: odd ids are
//! stored under exactly that id and nothing is ever written outside `data_dir`; ids past the core's
//! limit never reach the disk; names the file system refuses are a clean `session/storage`; and
//! the deepest request the core accepts survives a restart (its log line replays).

mod common;

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use session_core::conformance::sample_meta;
use session_core::{catalog, limits, ErrorCode, Limits, ManualClock, SeqIds, Store, Write};
use session_core::{ChangeSet, Env, Outcome, SessionError};
use session_store_fs::{FsConfig, FsStore, SyncMode};

fn open(dir: &Path) -> FsStore {
    FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("open")
}

struct Host {
    store: FsStore,
    clock: ManualClock,
    ids: SeqIds,
}

impl Host {
    fn new(dir: &Path) -> Self {
        Host { store: open(dir), clock: ManualClock::new(), ids: SeqIds::new() }
    }

    fn call(&self, id: &str, payload: Value) -> Result<Outcome<Value>, SessionError> {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        let result = catalog::call(&self.store, &env, id, payload);
        if let Err(e) = &result {
            assert!(e.to_string().starts_with(&format!("{}: ", e.code.as_str())), "{e}");
        }
        result
    }

    fn ok(&self, id: &str, payload: Value) -> Value {
        self.call(id, payload.clone())
            .unwrap_or_else(|e| panic!("{id} {payload} failed: {e}"))
            .response
    }
}

/// Ids a caller may legally use that mean something to a file system or to the store's layout.
fn odd_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "../escape/chat 42:?",
        "..",
        ".",
        "/",
        "a/b",
        "/etc/passwd",
        "..\\..\\x",
        "%",
        "%2E%2E",
        "%trash",
        "attachments",
        ".session-catalog",
        "x.jsonl",
        "x.jsonl.tmp",
        "nul\0byte",
        "ü/../../x",
        "\u{202E}rtl",
        "~",
        "-rf",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    ids.push("a".repeat(limits::MAX_ID_BYTES));
    ids.push("/".repeat(limits::MAX_ID_BYTES / 3));
    ids.push("é".repeat(limits::MAX_ID_BYTES / 6));
    ids
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn outside(base: &Path) -> Vec<String> {
    common::tree(base).into_iter().filter(|p| !p.starts_with("data")).collect()
}

#[test]
fn odd_ids_round_trip_and_nothing_is_written_outside_data_dir() {
    let base = tempfile::tempdir().expect("tempdir");
    let data = base.path().join("data");
    let ids = odd_ids();
    {
        let host = Host::new(&data);
        for id in &ids {
            host.ok("session::ensure", json!({"session_id": id, "title": id}));
            host.ok(
                "session::append",
                json!({"session_id": id, "entry_id": id, "message": user(id)}),
            );
            let put = json!({"session_id": id, "name": id, "mime": id, "data": "aGk="});
            let aid =
                host.ok("session::put-attachment", put)["attachment"]["attachment_id"].clone();
            host.ok("session::set-draft", json!({"session_id": id, "attachment_ids": [aid]}));
            host.ok("session::fork", json!({"session_id": id, "entry_id": id}));
        }
        for id in ["..", ".", "attachments", "%trash"] {
            assert_eq!(host.ok("session::delete", json!({"session_id": id}))["deleted"], true);
        }
    }
    assert!(
        outside(base.path()).is_empty(),
        "written outside data_dir: {:?}",
        outside(base.path())
    );
    assert_eq!(fs::read_dir(base.path()).expect("read").count(), 1);
    let host = Host::new(&data);
    for id in &ids {
        let meta = host.ok("session::get", json!({"session_id": id}));
        if ["..", ".", "attachments", "%trash"].contains(&id.as_str()) {
            assert_eq!(meta, Value::Null, "{id:?} was deleted");
            continue;
        }
        assert_eq!(meta["meta"]["session_id"], json!(id), "{id:?} after a restart");
        let messages = host.ok("session::messages", json!({"session_id": id}));
        assert_eq!(messages["messages"][0]["entry_id"], json!(id));
        let listed = host.ok("session::list-attachments", json!({"session_id": id}));
        assert_eq!(listed["attachments"].as_array().map(Vec::len), Some(1), "{id:?}");
    }
    // Every odd id, its fork, and nothing else.
    let sessions = host.ok("session::list", json!({"limit": 500}))["sessions"].clone();
    assert_eq!(sessions.as_array().map(Vec::len), Some(2 * ids.len() - 4));
}

#[test]
fn ids_past_the_limit_never_reach_the_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Host::new(dir.path());
    host.ok("session::ensure", json!({"session_id": "s1"}));
    let before = common::tree(dir.path());
    let long = "a".repeat(65_536);
    for (id, payload) in [
        ("session::ensure", json!({"session_id": long})),
        ("session::ensure", json!({"session_id": "/".repeat(limits::MAX_ID_BYTES / 3 + 1)})),
        ("session::get", json!({"session_id": long})),
        ("session::append", json!({"session_id": "s1", "entry_id": long, "message": user("x")})),
        ("session::get-attachment", json!({"session_id": "s1", "attachment_id": long})),
        ("session::store::put-meta", json!({"meta": sample_meta(&long, 1)})),
    ] {
        let error = host.call(id, payload).expect_err("refused");
        assert_eq!(error.code, ErrorCode::InvalidRequest, "{id}: {error}");
    }
    assert_eq!(common::tree(dir.path()), before, "a refused call touched the disk");
    host.ok("session::append", json!({"session_id": "s1", "message": user("still up")}));
}

#[test]
fn names_the_file_system_refuses_are_clean_storage_errors() {
    // The core refuses such ids; a store used without it still fails cleanly and stays usable.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let long = "x".repeat(4096);
    let put =
        ChangeSet { session_id: long.clone(), writes: vec![Write::PutMeta(sample_meta(&long, 1))] };
    let error = store.apply(&put).expect_err("ENAMETOOLONG");
    assert!(SessionError::from(error).to_string().starts_with("session/storage: "));
    assert!(matches!(store.get_meta(&long), Ok(None) | Err(_)));
    let ok =
        ChangeSet { session_id: "s1".into(), writes: vec![Write::PutMeta(sample_meta("s1", 1))] };
    store.apply(&ok).expect("the store still works");
    let ids: Vec<String> =
        store.list_metas().expect("list").into_iter().map(|m| m.session_id).collect();
    assert_eq!(ids, vec!["s1".to_string()]);
}

#[test]
fn the_deepest_accepted_request_replays_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The request object is level 1, so `metadata` may nest MAX_DEPTH - 1 levels.
    let deep = || limits::nested_object("k", limits::MAX_DEPTH - 1);
    let (meta, message) = {
        let host = Host::new(dir.path());
        host.ok("session::ensure", json!({"session_id": "s1", "metadata": deep()}));
        let call = json!({"type": "function_call", "id": "c", "function_id": "f",
            "arguments": limits::nested_object("k", limits::MAX_DEPTH - 5)});
        let message = json!({"role": "assistant", "content": [call], "stop_reason": "function_call",
            "model": "m", "provider": "p", "timestamp": 1});
        host.ok("session::append-many", json!({"session_id": "s1", "messages": [message.clone()]}));
        let too_deep =
            json!({"session_id": "s1", "metadata": limits::nested_object("k", limits::MAX_DEPTH)});
        assert!(host.call("session::set-meta", too_deep).is_err());
        (host.ok("session::get", json!({"session_id": "s1"})), message)
    };
    let host = Host::new(dir.path());
    assert_eq!(host.ok("session::get", json!({"session_id": "s1"})), meta, "meta replays");
    let read = host.ok("session::messages", json!({"session_id": "s1"}));
    assert_eq!(read["messages"][0]["message"], message, "the group replays");
}

#[test]
fn a_log_line_a_million_levels_deep_is_skipped_not_fatal() {
    // serde_json's 128-level parse limit still holds in this build although iii-sdk enables its
    // `unbounded_depth` feature (the feature only adds an opt-out): replay skips the line.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log =
        serde_json::to_vec(&json!({"type": "meta", "meta": sample_meta("s1", 1)})).expect("json");
    log.push(b'\n');
    log.extend(std::iter::repeat_n(b'[', 1_000_000));
    log.extend(std::iter::repeat_n(b']', 1_000_000));
    log.push(b'\n');
    fs::write(dir.path().join("s1.jsonl"), &log).expect("write");
    let host = Host::new(dir.path());
    assert_eq!(host.ok("session::get", json!({"session_id": "s1"}))["meta"]["session_id"], "s1");
    host.ok("session::append", json!({"session_id": "s1", "message": user("after")}));
    drop(host);
    let host = Host::new(dir.path());
    let read = host.ok("session::messages", json!({"session_id": "s1"}));
    assert_eq!(read["messages"].as_array().map(Vec::len), Some(1));
}

//! Unit tests of the request limits: depth, size, ids and cursors, measured without recursion.

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::*;
use crate::catalog;
use crate::error::ErrorCode;
use crate::{Env, Limits, ManualClock, MemStore, SeqIds};

fn code(result: Result<Value>) -> Option<ErrorCode> {
    result.err().map(|e| e.code)
}

#[test]
fn depth_at_the_limit_passes_one_more_fails() {
    let ok = json!({ "metadata": nested_object("k", MAX_DEPTH - 1) });
    assert!(check(ok, MAX_REQUEST_BYTES).is_ok());
    let deep = json!({ "metadata": nested_object("k", MAX_DEPTH) });
    let error = check(deep, MAX_REQUEST_BYTES).expect_err("too deep");
    assert_eq!(error.code, ErrorCode::InvalidRequest);
    assert!(error.to_string().contains("deeper than 64"), "{error}");
}

#[test]
fn a_million_levels_are_refused_and_dropped_flat() {
    let mut value = Value::Array(Vec::new());
    for _ in 0..1_000_000 {
        value = Value::Array(alloc::vec![value]);
    }
    assert_eq!(code(check(value, MAX_REQUEST_BYTES)), Some(ErrorCode::InvalidRequest));
    let deep = nested_object("metadata", 1_000_000);
    assert_eq!(code(check(deep, MAX_REQUEST_BYTES)), Some(ErrorCode::InvalidRequest));
}

#[test]
fn size_is_about_the_json_length() {
    let text = String::from_utf8(alloc::vec![b'x'; 1000]).expect("ascii");
    assert!(check(json!({ "title": text }), 1100).is_ok());
    let error = check(json!({ "title": text }), 900).expect_err("too large");
    assert!(error.to_string().contains("larger than 900 bytes"), "{error}");
}

#[test]
fn attachment_budget_follows_the_configured_limit() {
    let small = Limits { max_attachment_bytes: 10, ..Limits::default() };
    let budget = |id: &str, limits: &Limits| {
        crate::catalog::operation(id).expect("catalog id").effects.request_budget(limits)
    };
    assert_eq!(budget("session::put-attachment", &small), MAX_REQUEST_BYTES);
    let big = Limits { max_attachment_bytes: 300 << 20, ..Limits::default() };
    assert_eq!(budget("session::store::put-attachment", &big), (400 << 20) + (64 << 10));
    assert_eq!(budget("session::append", &big), MAX_REQUEST_BYTES);
}

#[test]
fn ids_are_limited_once_encoded() {
    let fits = "a".repeat(MAX_ID_BYTES);
    assert!(check(json!({ "session_id": fits }), MAX_REQUEST_BYTES).is_ok());
    let slashes = "/".repeat(MAX_ID_BYTES / 3 + 1);
    let error = check(json!({ "session_id": slashes }), MAX_REQUEST_BYTES).expect_err("long");
    assert!(error.to_string().contains("session_id is too long"), "{error}");
    for payload in [
        json!({ "entry": { "id": "a".repeat(MAX_ID_BYTES + 1) } }),
        json!({ "meta": { "attachment_id": "é".repeat(40) } }),
        json!({ "entry_ids": ["e1", "a".repeat(65_536)] }),
    ] {
        assert_eq!(code(check(payload, MAX_REQUEST_BYTES)), Some(ErrorCode::InvalidRequest));
    }
    let nested = json!({ "entry": { "id": "ok", "parent_id": "%".repeat(MAX_ID_BYTES / 3 + 1) } });
    let error = check(nested, MAX_REQUEST_BYTES).expect_err("long parent");
    assert!(error.to_string().contains("entry.parent_id is too long"), "{error}");
    for id in ["", "plain-id_1.x", "a/b c", "é~%", "\u{0}\u{7f}"] {
        assert_eq!(crate::jsonl::enc_len(id), crate::jsonl::enc(id).len(), "{id:?}");
    }
}

/// The one-pass look for long ids (`may_hold_a_long_id`) misses no path: the shortest id that is
/// too long, at every id path and in every id list, is refused with its path.
#[test]
fn the_shortest_long_id_is_refused_at_every_path() {
    let long = "/".repeat(MAX_ID_BYTES / 3 + 1);
    let nest = |path: &[&str], leaf: Value| {
        path.iter().rev().fold(leaf, |inner, key| json!({ *key: inner }))
    };
    for path in ID_PATHS {
        let error = check(nest(path, json!(long)), MAX_REQUEST_BYTES).expect_err("long id");
        assert!(error.to_string().contains(&path.join(".")), "{path:?}: {error}");
        let fits = "/".repeat(MAX_ID_BYTES / 3);
        assert!(check(nest(path, json!(fits)), MAX_REQUEST_BYTES).is_ok(), "{path:?}");
    }
    for path in ID_LIST_PATHS {
        let payload = nest(path, json!(["ok", long]));
        assert!(check(payload, MAX_REQUEST_BYTES).is_err(), "{path:?}");
    }
}

#[test]
fn long_cursors_are_invalid_cursors() {
    let error = crate::cursor::decode::<crate::cursor::EntryCursor>(&"A".repeat(5000))
        .expect_err("too long");
    assert_eq!(error.code, ErrorCode::InvalidCursor);
}

#[test]
fn unknown_functions_and_long_serde_details_answer_session_codes() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let store = MemStore::new();
    let error = catalog::call(&store, &env, &"x".repeat(10_000), json!({})).expect_err("unknown");
    assert_eq!(error.code, ErrorCode::InvalidRequest);
    assert!(error.to_string().len() < 300, "the id is clipped");
    let huge = "y".repeat(100_000);
    let error = catalog::call(&store, &env, "session::get", json!({ "session_id": 1, "x": huge }))
        .expect_err("wrong type");
    assert!(error.to_string().starts_with("session/invalid_request: invalid request: "));
    let error =
        catalog::call(&store, &env, "session::list", json!({ "status": huge })).expect_err("enum");
    assert!(error.to_string().len() < 1024, "serde detail is cut: {}", error.to_string().len());
}

/// The claim behind [`MAX_DEPTH`]: whatever the core accepts, its log lines replay (serde_json
/// parses lines with a 128-level limit; a deeper line would be skipped after a restart).
#[test]
fn the_deepest_accepted_writes_replay_from_their_log_lines() {
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let store = MemStore::new();
    // `nested_object(k, n)` at request depth `d` reaches depth `d + n - 1`; keep it at MAX_DEPTH.
    let deep = |at: usize| nested_object("k", MAX_DEPTH + 1 - at);
    let call = |id: &str, payload: Value| {
        catalog::call(&store, &env, id, payload).map(|_| ()).map_err(|e| e.to_string())
    };
    let block = |at: usize| json!({"type": "function_call", "id": "c", "function_id": "f", "arguments": deep(at)});
    let result = |at: usize| {
        json!({"role": "function_result", "function_call_id": "c",
        "function_id": "f", "content": [], "details": deep(at), "timestamp": 1})
    };
    let assistant = |at: usize| {
        json!({"role": "assistant", "content": [block(at)],
        "stop_reason": "function_call", "model": "m", "provider": "p", "timestamp": 1})
    };
    let steps = [
        ("session::ensure", json!({"session_id": "s", "metadata": deep(2)})),
        ("session::set-meta", json!({"session_id": "s", "metadata": deep(2)})),
        ("session::append", json!({"session_id": "s", "origin": deep(2), "message": assistant(5)})),
        ("session::append-many", json!({"session_id": "s", "messages": [assistant(6), result(4)]})),
        (
            "session::update-message",
            json!({"session_id": "s", "entry_id": "e_003", "content": [], "details": deep(2)}),
        ),
        (
            "session::append",
            json!({"session_id": "s", "custom": {"custom_type": "t", "data": deep(3)}}),
        ),
        ("session::fork", json!({"session_id": "s", "entry_id": "e_003"})),
    ];
    for (id, payload) in steps {
        assert_eq!(call(id, payload), Ok(()), "{id} at the limit is accepted");
    }
    for sid in store.session_ids() {
        let state = store.session_state(&sid);
        for record in state.snapshot_records() {
            let group = crate::jsonl::encode_records(&[record.clone(), record]);
            let (_, stats) = crate::jsonl::replay(&group);
            assert_eq!(
                (stats.lines, stats.skipped),
                (3, 0),
                "{sid}: a group of the record replays"
            );
        }
        let (again, stats) = crate::jsonl::replay(&store.export_jsonl(&sid).expect("stored"));
        assert_eq!((stats.skipped, &again), (0, &state), "{sid} replays");
    }
    let too_deep = json!({"session_id": "s", "metadata": deep(1)});
    assert!(call("session::set-meta", too_deep).is_err(), "one level more is refused");
}

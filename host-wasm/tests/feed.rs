//! Live sync through the JavaScript-facing `Workspace` (wasm, under Node and headless Chromium):
//! the feed seq every event of `call` carries, an append-delta's recorded change, and
//! `rebuildFromFeed` (plain feed, fork snapshot, truncated feed, deleted session).
#![cfg(target_arch = "wasm32")]

use serde_json::{json, Value};
use session_wasm::Workspace;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn js(value: &Value) -> JsValue {
    use serde::Serialize;
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).expect("to JS")
}

fn workspace(options: Value) -> Workspace {
    Workspace::new(js(&options)).expect("workspace")
}

fn call(ws: &Workspace, id: &str, request: Value) -> Value {
    serde_wasm_bindgen::from_value(ws.call(id, js(&request)).expect(id)).expect("JSON result")
}

fn rebuild(ws: &Workspace, session_id: &str) -> Value {
    serde_wasm_bindgen::from_value(ws.rebuild_from_feed(session_id).expect("rebuild"))
        .expect("JSON result")
}

fn assistant(text: &str) -> Value {
    json!({ "role": "assistant", "content": [{ "type": "text", "text": text }],
        "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 0 })
}

/// A session with every kind of change: created, added, delta, status, meta, custom.
fn busy_session(ws: &Workspace) -> Vec<Value> {
    let mut events = Vec::new();
    let mut run = |id: &str, request: Value| {
        let out = call(ws, id, request);
        events.extend(out["events"].as_array().cloned().unwrap_or_default());
    };
    run("session::ensure", json!({ "session_id": "s", "metadata": { "owner": "u" } }));
    run(
        "session::append",
        json!({ "session_id": "s", "entry_id": "e1", "message": assistant("a") }),
    );
    run("session::append-delta", json!({ "session_id": "s", "entry_id": "e1", "text": "b" }));
    run("session::set-status", json!({ "session_id": "s", "status": "working" }));
    run("session::set-meta", json!({ "session_id": "s", "title": "t" }));
    run(
        "session::append",
        json!({ "session_id": "s", "custom": { "custom_type": "c", "data": 1 } }),
    );
    events
}

#[wasm_bindgen_test]
fn every_event_carries_its_seq_and_a_delta_its_recorded_change() {
    let ws = workspace(json!({ "deterministic": true }));
    let events = busy_session(&ws);
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().expect("seq")).collect();
    assert_eq!(seqs, (1..=6).collect::<Vec<u64>>(), "one seq per event, from 1, no gaps");
    let delta = &events[2];
    assert_eq!(delta["trigger_type"], "session::message-updated");
    assert_eq!(delta["payload"]["message"]["content"][0]["text"], "ab", "the full message");
    assert_eq!(delta["change"]["type"], "session::message-delta");
    assert_eq!(delta["change"]["payload"]["text"], "b", "the compact delta");
    assert_eq!(delta["change"]["payload"]["block_index"], 0);
    for (i, event) in events.iter().enumerate().filter(|(i, _)| *i != 2) {
        assert!(event.get("change").is_none(), "event {i}: its change is the event itself");
    }
    // The feed serves the same seqs and types.
    let page = call(&ws, "session::changes", json!({ "session_id": "s" }))["response"].clone();
    assert_eq!(page["latest_seq"], 6);
    assert_eq!(page["changes"][2]["type"], "session::message-delta");
    // A read fires nothing; the next mutation continues the feed.
    assert_eq!(call(&ws, "session::get", json!({ "session_id": "s" }))["events"], json!([]));
    let out = call(&ws, "session::set-status", json!({ "session_id": "s", "status": "done" }));
    assert_eq!(out["events"][0]["seq"], 7);
}

#[wasm_bindgen_test]
fn a_session_rebuilt_from_its_feed_matches_the_store() {
    let ws = workspace(json!({ "deterministic": true }));
    busy_session(&ws);
    let rebuilt = rebuild(&ws, "s");
    assert_eq!(rebuilt["matches"], true, "{rebuilt}");
    assert_eq!(rebuilt["difference"], Value::Null);
    assert_eq!(rebuilt["applied"], 6);
    assert_eq!(
        (rebuilt["applied_seq"].clone(), rebuilt["latest_seq"].clone()),
        (json!(6), json!(6))
    );
    assert_eq!(rebuilt["snapshots"], json!([]));
    assert_eq!(rebuilt["meta"]["title"], "t");
    assert_eq!(rebuilt["meta"]["status"], "working");
    assert_eq!(rebuilt["meta"]["message_count"], 1);
    let entries = rebuilt["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["message"]["content"][0]["text"], "ab");
    assert_eq!(entries[0]["revision"], 1);
}

#[wasm_bindgen_test]
fn pages_a_long_feed_and_snapshots_a_fork_and_a_truncated_feed() {
    let ws = workspace(json!({ "deterministic": true, "default_list_limit": 2 }));
    busy_session(&ws);
    let rebuilt = rebuild(&ws, "s");
    assert_eq!((rebuilt["matches"].clone(), rebuilt["pages"].clone()), (json!(true), json!(3)));

    let fork = call(&ws, "session::fork", json!({ "session_id": "s", "entry_id": "e1" }));
    let fork_id = fork["response"]["session_id"].as_str().expect("fork id").to_string();
    assert_eq!(fork["events"][0]["seq"], 1, "a fork's feed starts at 1");
    // The fork copies e1 under a new id: its active leaf.
    let leaf = call(&ws, "session::store::get-active-leaf", json!({ "session_id": fork_id }));
    let copy = leaf["response"]["entry_id"].clone();
    call(
        &ws,
        "session::append-delta",
        json!({ "session_id": fork_id, "entry_id": copy, "text": "c" }),
    );
    let rebuilt = rebuild(&ws, &fork_id);
    assert_eq!(rebuilt["matches"], true, "{rebuilt}");
    assert_eq!(rebuilt["snapshots"], json!([{ "at_seq": 2, "reason": "fork" }]));
    assert_eq!(rebuilt["meta"]["forked_from"], "s");

    let small = workspace(json!({ "deterministic": true, "feed_retention": 2 }));
    busy_session(&small);
    let rebuilt = rebuild(&small, "s");
    assert_eq!(rebuilt["matches"], true, "{rebuilt}");
    assert_eq!(rebuilt["snapshots"], json!([{ "at_seq": 6, "reason": "truncated" }]));
    assert_eq!(rebuilt["applied"], 0);
}

#[wasm_bindgen_test]
fn a_deleted_session_rebuilds_to_nothing() {
    let ws = workspace(json!({ "deterministic": true }));
    busy_session(&ws);
    call(&ws, "session::delete", json!({ "session_id": "s" }));
    let rebuilt = rebuild(&ws, "s");
    assert_eq!(rebuilt["matches"], true, "{rebuilt}");
    assert_eq!(rebuilt["meta"], Value::Null);
    assert_eq!(rebuilt["entries"], json!([]));
    let never = rebuild(&ws, "never");
    assert_eq!((never["matches"].clone(), never["latest_seq"].clone()), (json!(true), json!(0)));
}

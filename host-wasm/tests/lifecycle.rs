//! A session's lifecycle through the JavaScript-facing `Workspace` (wasm, under Node and headless
//! Chromium), on a deterministic workspace (manual clock from 1 000 000 ms): trash → list-trash
//! → restore (everything back, a new feed epoch) → trash again → sweep (not before
//! `trash_retention_secs`, then purged), and an expiry swept with its `session::deleted`.
#![cfg(target_arch = "wasm32")]

use serde_json::{json, Value};
use session_wasm::Workspace;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn js(value: &Value) -> JsValue {
    use serde::Serialize;
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).expect("to JS")
}

fn call(ws: &Workspace, id: &str, request: Value) -> Value {
    serde_wasm_bindgen::from_value(ws.call(id, js(&request)).expect(id)).expect("JSON result")
}

/// The trigger types of the events an answer carries.
fn fired(out: &Value) -> Vec<&str> {
    let events = out["events"].as_array().expect("events");
    events.iter().map(|e| e["trigger_type"].as_str().expect("trigger_type")).collect()
}

fn live_ids(ws: &Workspace) -> Vec<String> {
    let page = call(ws, "session::list", json!({ "order": "created_asc" }))["response"].clone();
    let sessions = page["sessions"].as_array().expect("sessions").iter();
    sessions.map(|m| m["session_id"].as_str().expect("id").to_string()).collect()
}

fn user(text: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "text", "text": text }], "timestamp": 1 })
}

#[wasm_bindgen_test]
fn trash_list_trash_restore_then_the_sweep_purges_after_the_retention() {
    let ws = Workspace::new(js(&json!({ "deterministic": true, "trash_retention_secs": 60 })))
        .expect("workspace");
    assert_eq!(ws.now(), 1_000_000.0);
    call(&ws, "session::ensure", json!({ "session_id": "s1", "metadata": { "owner": "u1" } }));
    call(&ws, "session::set-meta", json!({ "session_id": "s1", "title": "Kept" }));
    call(
        &ws,
        "session::append",
        json!({ "session_id": "s1", "entry_id": "e1", "message": user("hi") }),
    );
    call(&ws, "session::ensure", json!({ "session_id": "s2" }));
    let before = call(&ws, "session::get", json!({ "session_id": "s1" }))["response"].clone();
    assert_eq!(before["meta"]["title"], "Kept");

    ws.advance(10.0).expect("manual clock");
    let trashed = call(&ws, "session::trash", json!({ "session_id": "s1" }));
    assert_eq!(trashed["response"], json!({ "trashed": true, "purge_at": 1_060_010 }));
    assert_eq!(fired(&trashed), ["session::deleted"]);
    assert_eq!(trashed["events"][0]["session_metadata"], json!({ "owner": "u1" }));

    // Out of every seed read and list, listed by list-trash only.
    assert_eq!(live_ids(&ws), ["s2"]);
    assert_eq!(call(&ws, "session::get", json!({ "session_id": "s1" }))["response"], Value::Null);
    let trash = call(&ws, "session::list-trash", json!({}))["response"].clone();
    assert_eq!(trash["total"], 1);
    let listed = &trash["sessions"][0];
    assert_eq!(listed["meta"]["session_id"], "s1");
    assert_eq!(listed["meta"]["title"], "Kept");
    assert_eq!(listed["trashed_at"], 1_000_010);
    assert_eq!(listed["purge_at"], 1_060_010);
    let other = call(&ws, "session::list-trash", json!({ "metadata": { "owner": "u2" } }));
    assert_eq!(other["response"], json!({ "sessions": [], "total": 0 }));
    assert_eq!(
        call(&ws, "session::lifecycle", json!({ "session_id": "s1" }))["response"],
        json!({ "session_id": "s1", "expires_at": null, "trashed_at": 1_000_010, "purge_at": 1_060_010 })
    );

    // Restore: back exactly as it was, announced as a creation that starts a new feed epoch.
    let restored = call(&ws, "session::restore", json!({ "session_id": "s1" }));
    assert_eq!(restored["response"], json!({ "restored": true }));
    assert_eq!(fired(&restored), ["session::created"]);
    assert_eq!(restored["events"][0]["seq"], 1, "the restored session's feed starts again at 1");
    assert_eq!(call(&ws, "session::get", json!({ "session_id": "s1" }))["response"], before);
    let messages =
        call(&ws, "session::messages", json!({ "session_id": "s1" }))["response"].clone();
    assert_eq!(messages["messages"][0]["message"]["content"][0]["text"], "hi");
    assert_eq!(live_ids(&ws), ["s1", "s2"]);
    let empty = call(&ws, "session::list-trash", json!({}));
    assert_eq!(empty["response"], json!({ "sessions": [], "total": 0 }));
    let again = call(&ws, "session::restore", json!({ "session_id": "s1" }));
    assert_eq!(again["response"], json!({ "restored": false }));
    assert!(fired(&again).is_empty());

    // Trashed again: the sweep leaves it for trash_retention_secs, then purges it.
    call(&ws, "session::trash", json!({ "session_id": "s1" }));
    ws.advance(59_999.0).expect("manual clock");
    let early = call(&ws, "session::sweep", json!({}));
    assert_eq!(early["response"], json!({ "expired": 0, "purged": 0 }));
    ws.advance(1.0).expect("manual clock");
    let swept = call(&ws, "session::sweep", json!({}));
    assert_eq!(swept["response"], json!({ "expired": 0, "purged": 1 }));
    assert!(fired(&swept).is_empty(), "its session::deleted fired when it was trashed");
    let none = call(&ws, "session::list-trash", json!({}));
    assert_eq!(none["response"], json!({ "sessions": [], "total": 0 }));
    let gone = call(&ws, "session::lifecycle", json!({ "session_id": "s1" }));
    assert_eq!(gone["response"], Value::Null);
    let purged = call(&ws, "session::restore", json!({ "session_id": "s1" }));
    assert_eq!(purged["response"], json!({ "restored": false }));
    let ids: Value = serde_wasm_bindgen::from_value(ws.session_ids().expect("ids")).expect("JSON");
    assert_eq!(ids, json!(["s2"]));
}

#[wasm_bindgen_test]
fn an_expiry_is_swept_once_it_has_passed() {
    let ws = Workspace::new(js(&json!({ "deterministic": true }))).expect("workspace");
    call(&ws, "session::ensure", json!({ "session_id": "s1" }));
    let set =
        call(&ws, "session::set-expiry", json!({ "session_id": "s1", "expires_at": 1_000_500 }));
    assert_eq!(set["response"], json!({ "session_id": "s1", "expires_at": 1_000_500 }));
    assert!(fired(&set).is_empty(), "setting an expiry is event-silent");
    let lifecycle = call(&ws, "session::lifecycle", json!({ "session_id": "s1" }));
    assert_eq!(lifecycle["response"]["expires_at"], 1_000_500);
    assert_eq!(
        call(&ws, "session::sweep", json!({}))["response"],
        json!({ "expired": 0, "purged": 0 })
    );
    ws.set_time(1_000_500.0).expect("manual clock");
    let swept = call(&ws, "session::sweep", json!({}));
    assert_eq!(swept["response"], json!({ "expired": 1, "purged": 0 }));
    assert_eq!(fired(&swept), ["session::deleted"]);
    assert_eq!(call(&ws, "session::get", json!({ "session_id": "s1" }))["response"], Value::Null);

    // A malformed expiry changes nothing and says why.
    call(&ws, "session::ensure", json!({ "session_id": "s2" }));
    let thrown = ws
        .call("session::set-expiry", js(&json!({ "session_id": "s2", "expires_at": "soon" })))
        .expect_err("a string is no expiry");
    let code = js_sys::Reflect::get(&thrown, &"code".into()).expect("code").as_string();
    assert_eq!(code.as_deref(), Some("session/invalid_request"));
}

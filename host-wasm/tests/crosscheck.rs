//! The cross-host check in wasm: the core's generated sequences run through the JavaScript-facing
//! `Workspace` (requests in and responses, events and thrown errors out as JS values) must give
//! the digest the native build pinned in `core/tests/fixtures/crosscheck.txt`.
#![cfg(target_arch = "wasm32")]

use serde_json::{json, Value};
use session_core::crosscheck::{run, CallOutput, Host, LIMITS};
use session_wasm::Workspace;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const FIXTURE: &str = include_str!("../../core/tests/fixtures/crosscheck.txt");

fn js(value: &Value) -> JsValue {
    use serde::Serialize;
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).expect("to JS")
}

struct WasmHost(Workspace);

/// An event of `call` as the envelope every host digests: without `seq`, `epoch` and `change`,
/// which every mutation's event carries here (MemStore keeps a feed).
fn envelope(mut event: Value) -> Value {
    let fields = event.as_object_mut().expect("an event is an object");
    assert!(fields.remove("seq").is_some_and(|seq| seq.as_u64() > Some(0)), "an event without seq");
    assert!(fields.remove("epoch").is_some_and(|e| e.is_string()), "an event without its epoch");
    fields.remove("change");
    event
}

fn workspace() -> Workspace {
    let options = json!({ "deterministic": true, "default_list_limit": LIMITS.default_list_limit,
        "max_list_limit": LIMITS.max_list_limit, "max_attachment_bytes": LIMITS.max_attachment_bytes });
    Workspace::new(js(&options)).expect("workspace")
}

impl Host for WasmHost {
    fn reset(&mut self) {
        self.0 = workspace();
    }
    fn advance(&mut self, ms: i64) {
        self.0.advance(ms as f64).expect("deterministic clock");
    }
    fn call(&mut self, function_id: &str, request: Value) -> CallOutput {
        match self.0.call(function_id, js(&request)) {
            Ok(out) => {
                let mut out: Value = serde_wasm_bindgen::from_value(out).expect("JSON result");
                // The digest covers the envelope (`trigger_type`, `payload`, `session_metadata?`);
                // each event's feed `seq` (and recorded `change`) is the wasm host's addition.
                let events = match out["events"].take() {
                    Value::Array(events) => events.into_iter().map(envelope).collect(),
                    _ => Vec::new(),
                };
                CallOutput { result: Ok(out["response"].take()), events }
            }
            Err(thrown) => {
                let error = thrown.dyn_into::<js_sys::Error>().expect("thrown value is an Error");
                let code =
                    js_sys::Reflect::get(&error, &"code".into()).ok().and_then(|c| c.as_string());
                let message = String::from(error.message());
                CallOutput {
                    result: Err((code.expect("code property"), message)),
                    events: Vec::new(),
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn wasm_matches_the_native_transcript() {
    let report = run(&mut WasmHost(workspace()), &mut |_| {});
    assert!(report.uncovered().is_empty(), "never answered: {:?}", report.uncovered());
    assert_eq!(report.summary(), FIXTURE);
}

#[wasm_bindgen_test]
fn errors_are_js_errors_with_a_code() {
    let ws = workspace();
    let thrown =
        ws.call("session::get-message", js(&json!({ "session_id": "nope", "entry_id": "e" })));
    assert!(thrown.is_ok(), "reads of unknown sessions answer null");
    let thrown = ws
        .call("session::append", js(&json!({ "session_id": "nope", "message": null })))
        .unwrap_err();
    let error = thrown.dyn_into::<js_sys::Error>().expect("an Error");
    let code = js_sys::Reflect::get(&error, &"code".into()).unwrap().as_string();
    assert_eq!(code.as_deref(), Some("session/not_found"));
    assert!(String::from(error.message()).starts_with("session/not_found: "));
}

#[wasm_bindgen_test]
fn loads_and_exports_jsonl() {
    let ws = workspace();
    let created = ws.call("session::create", js(&json!({ "title": "t" }))).expect("create");
    let created: Value = serde_wasm_bindgen::from_value(created).unwrap();
    assert_eq!(created["events"][0]["trigger_type"], "session::created");
    let user =
        json!({ "role": "user", "content": [{ "type": "text", "text": "hi" }], "timestamp": 1 });
    ws.call("session::append", js(&json!({ "session_id": "s_001", "message": user })))
        .expect("append");
    let text = ws.export_jsonl("s_001").expect("export");
    let torn = format!("{text}garbage\n{{\"type\":\"me");
    let other = workspace();
    let loaded: Value = serde_wasm_bindgen::from_value(
        other.load_jsonl("x.jsonl", JsValue::from_str(&torn)).unwrap(),
    )
    .unwrap();
    assert_eq!(loaded["session_id"], "s_001");
    assert_eq!(loaded["skipped"], 2);
    assert_eq!(other.export_jsonl("s_001").expect("export"), text);
}

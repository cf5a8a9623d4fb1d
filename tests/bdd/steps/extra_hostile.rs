//! Steps of the hostile-input feature: payloads too big or too deep to write inline (built here,
//! without recursion), non-object payloads, function ids outside the catalog, and a full
//! before/after comparison of the store around a refused call.

use std::collections::HashMap;
use std::sync::Mutex;

use cucumber::{given, then, when};
use serde_json::{Map, Value};
use session_core::record::SessionState;
use session_core::wire::AttachmentMeta;
use session_core::{catalog, limits, Env, SessionError};

use crate::host::CallError;
use crate::json;
use crate::world::SessionWorld;

/// Every session of the store: its state and its attachments (bytes included).
type Dump = Vec<(String, SessionState, Vec<(AttachmentMeta, Vec<u8>)>)>;

/// Stores remembered by `Given the store is remembered`, by scenario world (its address: scenarios
/// of one run interleave on one thread, and a world does not move while its scenario runs).
static REMEMBERED: Mutex<Option<HashMap<usize, Dump>>> = Mutex::new(None);

fn key(w: &SessionWorld) -> usize {
    w as *const SessionWorld as usize
}

fn dump(w: &SessionWorld) -> Dump {
    let store = w.host.store();
    w.host
        .session_states()
        .into_iter()
        .map(|(sid, state)| {
            let mut metas = store.list_attachments(&sid).expect("the store lists");
            metas.sort_by(|a, b| a.attachment_id.cmp(&b.attachment_id));
            let attachments = metas
                .into_iter()
                .filter_map(|m| store.get_attachment(&sid, &m.attachment_id).expect("reads"))
                .collect();
            (sid, state, attachments)
        })
        .collect()
}

/// Puts `value` at the dotted `path` of `payload` (objects are created on the way; numbers index
/// arrays).
fn put_at(payload: &mut Value, path: &str, value: Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().expect("a path");
    let mut node = payload;
    for part in parts {
        node = match node {
            Value::Array(items) => &mut items[part.parse::<usize>().expect("an index")],
            Value::Object(map) => map.entry(part).or_insert_with(|| Value::Object(Map::new())),
            other => panic!("cannot descend into {other} at {part}"),
        };
    }
    match node {
        Value::Array(items) => items[last.parse::<usize>().expect("an index")] = value,
        Value::Object(map) => {
            map.insert(last.into(), value);
        }
        other => panic!("cannot set {last} in {other}"),
    }
}

#[given("the store is remembered")]
fn remember(w: &mut SessionWorld) {
    let mut all = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
    all.get_or_insert_with(HashMap::new).insert(key(w), dump(w));
}

#[then("the store is as remembered")]
fn as_remembered(w: &mut SessionWorld) {
    compare_remembered(w, false);
}

/// `Then the store is as remembered, its feed aside`: every session's meta, entries, leaf,
/// commit markers and attachments as remembered; the feeds may differ (a restore starts a new
/// epoch).
#[then("the store is as remembered, its feed aside")]
fn as_remembered_but_feed(w: &mut SessionWorld) {
    compare_remembered(w, true);
}

fn compare_remembered(w: &mut SessionWorld, feed_aside: bool) {
    let mut all = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
    let mut before = all
        .get_or_insert_with(HashMap::new)
        .remove(&key(w))
        .unwrap_or_else(|| panic!("no `Given the store is remembered` in this scenario"));
    let mut after = dump(w);
    if feed_aside {
        for (_, state, _) in before.iter_mut().chain(after.iter_mut()) {
            state.feed = Default::default();
        }
    }
    assert!(after == before, "the store changed:\nbefore: {before:?}\nafter: {after:?}");
}

/// `Then the store holds the sessions "s1, s2"`: exactly these session ids are stored.
#[then(regex = r#"^the store holds the sessions "([^"]*)"$"#)]
fn holds_sessions(w: &mut SessionWorld, ids: String) {
    let expected: Vec<String> =
        ids.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    let stored: Vec<String> = w.host.session_states().into_iter().map(|(sid, _)| sid).collect();
    assert_eq!(stored, expected);
}

/// `When I call "session::x" with {...} and "title" set to 1000 times "ab"`.
#[when(regex = r#"^I call "([^"]+)" with (\{.*\}) and "([^"]+)" set to (\d+) times "([^"]*)"$"#)]
fn call_with_long_string(
    w: &mut SessionWorld,
    function: String,
    payload: String,
    path: String,
    times: usize,
    unit: String,
) {
    let mut payload = json::parse(&payload);
    put_at(&mut payload, &path, Value::String(unit.repeat(times)));
    w.call(&function, payload);
}

/// `When I call "session::x" with {...} and "metadata" nested 10000 levels deep`: the value at
/// the path is `{"k": {"k": … {}}}`, that many objects deep.
#[when(regex = r#"^I call "([^"]+)" with (\{.*\}) and "([^"]+)" nested (\d+) levels deep$"#)]
fn call_with_deep_value(
    w: &mut SessionWorld,
    function: String,
    payload: String,
    path: String,
    depth: usize,
) {
    let mut payload = json::parse(&payload);
    put_at(&mut payload, &path, limits::nested_object("k", depth));
    w.call(&function, payload);
}

/// `When I call "session::x" with an array nested 10000 levels deep` (`[[[…]]]`).
#[when(regex = r#"^I call "([^"]+)" with an array nested (\d+) levels deep$"#)]
fn call_with_deep_array(w: &mut SessionWorld, function: String, depth: usize) {
    let mut value = Value::Array(Vec::new());
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    w.call(&function, value);
}

/// `When I call "session::x" with the non-object [1, 2]`: any JSON payload (array, string, …).
#[when(regex = r#"^I call "([^"]+)" with the non-object (.+)$"#)]
fn call_with_non_object(w: &mut SessionWorld, function: String, payload: String) {
    w.call(&function, json::parse(&payload));
}

/// `When I call the unknown function "session::nope" with {...}`: through `catalog::call`, which
/// answers ids outside the catalog as a host would. JSON escapes in the id are decoded (`\u0000`).
#[when(regex = r#"^I call the unknown function "([^"]*)" with (\{.*\})$"#)]
fn call_unknown(w: &mut SessionWorld, function: String, payload: String) {
    let function: String = serde_json::from_str(&format!("\"{function}\""))
        .unwrap_or_else(|e| panic!("bad escape in {function}: {e}"));
    let result = call_directly(w, &function, json::parse(&payload));
    record(w, result);
}

/// `catalog::call` on the host's store. Hosts register only catalog ids (the engine never routes
/// another id to `Worker::call`), so on both hosts these calls reach the store directly.
fn call_directly(
    w: &SessionWorld,
    function: &str,
    payload: Value,
) -> Result<session_core::Outcome<Value>, SessionError> {
    let env = Env { clock: &*w.clock, ids: &*w.ids, limits: w.limits };
    catalog::call(&*w.host.store(), &env, function, payload)
}

/// Records a call's outcome (without delivering events: these steps are for refused calls).
fn record(w: &mut SessionWorld, result: Result<session_core::Outcome<Value>, SessionError>) {
    match result {
        Ok(outcome) => {
            w.events = outcome.events;
            w.last = Some(Ok(outcome.response));
        }
        Err(error) => {
            w.events = Vec::new();
            w.last = Some(Err(CallError::from(&error)));
        }
    }
}

/// `When I call the unknown function of 65536 times "x"`.
#[when(regex = r#"^I call the unknown function of (\d+) times "([^"]*)"$"#)]
fn call_unknown_long(w: &mut SessionWorld, times: usize, unit: String) {
    let result = call_directly(w, &unit.repeat(times), Value::Null);
    record(w, result);
}

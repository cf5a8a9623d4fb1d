//! Extra steps of the lifecycle features: feeding a field of the previous response into the next
//! call (cursor paging), reading one named key of every item of an array (in order or not), and
//! the values a binding received.

use cucumber::{then, when};
use serde_json::Value;

use crate::json;
use crate::world::SessionWorld;

/// `When I call "session::list" with {...} passing the previous "next_cursor" as "cursor"`: the
/// value at the dotted path of the last (successful) response is put under the given key.
#[when(regex = r#"^I call "([^"]+)" with (\{.*\}) passing the previous "([^"]+)" as "([^"]+)"$"#)]
fn call_passing(
    w: &mut SessionWorld,
    function: String,
    payload: String,
    path: String,
    key: String,
) {
    let value = json::at(w.response(), &path)
        .unwrap_or_else(|| panic!("field {path} is absent in {}", w.response()))
        .clone();
    let mut payload = json::parse(&payload);
    payload
        .as_object_mut()
        .unwrap_or_else(|| panic!("payload is not an object"))
        .insert(key, value);
    w.call(&function, payload);
}

/// The string value of `key` (a dotted path) in every item of the array at `path`.
fn values_at(w: &SessionWorld, key: &str, path: &str) -> Vec<String> {
    let items = json::at(w.response(), path)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{path} is not an array in {}", w.response()));
    items
        .iter()
        .map(|item| match json::at(item, key) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => panic!("item without {key}: {item}"),
        })
        .collect()
}

fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// `Then the "attachment_id" values at "attachments" are "a_001, a_002"` (in order).
#[then(regex = r#"^the "([^"]+)" values at "([^"]*)" are "([^"]*)"$"#)]
fn values_in_order(w: &mut SessionWorld, key: String, path: String, expected: String) {
    assert_eq!(values_at(w, &key, &path), list(&expected));
}

/// `Then the "id" values at "entries" are in any order "e1, e2"` (for unordered store listings).
#[then(regex = r#"^the "([^"]+)" values at "([^"]*)" are in any order "([^"]*)"$"#)]
fn values_any_order(w: &mut SessionWorld, key: String, path: String, expected: String) {
    let mut actual = values_at(w, &key, &path);
    let mut expected = list(&expected);
    actual.sort();
    expected.sort();
    assert_eq!(actual, expected);
}

/// `Then binding "b1" received "session_id" values "s1, s2"`: that key of every delivered
/// payload, in delivery order.
#[then(regex = r#"^binding "([^"]+)" received "([^"]+)" values "([^"]*)"$"#)]
fn binding_values(w: &mut SessionWorld, name: String, key: String, expected: String) {
    let b = w.bindings.get(&name).unwrap_or_else(|| panic!("no binding {name}"));
    let actual: Vec<String> = b
        .received
        .iter()
        .map(|p| match p.get(&key) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => panic!("payload without {key}: {p}"),
        })
        .collect();
    assert_eq!(actual, list(&expected), "received: {:?}", b.received);
}

/// `Then binding "b1" last received exactly {...}`: exact equality of the last delivered payload.
#[then(regex = r#"^binding "([^"]+)" last received exactly (\{.*\})$"#)]
fn binding_last_exact(w: &mut SessionWorld, name: String, expected: String) {
    let b = w.bindings.get(&name).unwrap_or_else(|| panic!("no binding {name}"));
    let last = b.received.last().unwrap_or_else(|| panic!("{name} received nothing"));
    let mut diffs = Vec::new();
    json::exact_diff(&json::parse(&expected), last, "", &mut diffs);
    assert!(diffs.is_empty(), "payload differs:\n  {}\nactual: {last}", diffs.join("\n  "));
}

/// `Then the response field "next_cursor" exists`: the key is present (any value but `null`).
#[then(regex = r#"^the response field "([^"]*)" exists$"#)]
fn field_exists(w: &mut SessionWorld, path: String) {
    match json::at(w.response(), &path) {
        Some(Value::Null) | None => panic!("field {path} is missing or null: {}", w.response()),
        Some(_) => {}
    }
}

/// `Then the response field "next_cursor" does not exist`: the key is omitted. (The documented
/// `... is absent` also matches the generic `... is <json>` step, so cucumber reports it as
/// ambiguous.)
#[then(regex = r#"^the response field "([^"]*)" does not exist$"#)]
fn field_does_not_exist(w: &mut SessionWorld, path: String) {
    assert!(json::at(w.response(), &path).is_none(), "field {path} is present: {}", w.response());
}

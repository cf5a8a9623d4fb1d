//! Extra steps for the entry functions: following a `next_cursor`, checking which tail items are
//! elided placeholders, and walking `messages-tail` back page by page.

use cucumber::gherkin::Step;
use cucumber::{then, when};
use serde_json::{json, Value};

use crate::json;
use crate::world::SessionWorld;

/// `When I call "session::messages" with {...} and the last next_cursor`: the payload plus
/// `cursor` = the previous response's `next_cursor` (which must be present).
#[when(regex = r#"^I call "([^"]+)" with (\{.*\}) and the last next_cursor$"#)]
fn call_with_next_cursor(w: &mut SessionWorld, function: String, payload: String) {
    let cursor = w
        .response()
        .get("next_cursor")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("the last response has no next_cursor: {}", w.response()))
        .to_string();
    let mut payload = json::parse(&payload);
    payload["cursor"] = json!(cursor);
    w.call(&function, payload);
}

/// `Then the response field "entry.message" is:` + docstring: exact JSON of one field.
#[then(regex = r#"^the response field "([^"]*)" is:$"#)]
fn field_is_doc(w: &mut SessionWorld, path: String, step: &Step) {
    let expected = json::parse(step.docstring.as_deref().expect("docstring"));
    let actual = json::at(w.response(), &path)
        .unwrap_or_else(|| panic!("field {path} is absent in {}", w.response()));
    let mut diffs = Vec::new();
    json::exact_diff(&expected, actual, "", &mut diffs);
    assert!(diffs.is_empty(), "{path} differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

/// `Then the elided items at "messages" are "e_a1, e_r1"`: exactly these items carry
/// `elided: true`; every other item has no `elided` key at all (never `false`). `""` = none.
#[then(regex = r#"^the elided items at "([^"]*)" are "([^"]*)"$"#)]
fn elided_items(w: &mut SessionWorld, path: String, ids: String) {
    let items = json::at(w.response(), &path)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{path} is not an array in {}", w.response()));
    let expected: Vec<&str> = ids.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut actual = Vec::new();
    for item in items {
        let id = item["entry_id"].as_str().unwrap_or("?");
        match item.get("elided") {
            None => {}
            Some(Value::Bool(true)) => actual.push(id),
            Some(other) => panic!("item {id} has elided: {other} (must be true or absent)"),
        }
    }
    assert_eq!(actual, expected, "items: {}", Value::Array(items.clone()));
}

/// `Then walking "s1" back with messages-tail at limit 2 reproduces messages with include_custom`:
/// newest page first, then `before_entry_id` = `oldest_entry_id` until `has_more` is false; no
/// page may be empty while `has_more` is true; the concatenated ids must equal
/// `session::messages {include_custom: true}` exactly (no gaps, no duplicates).
#[then(
    regex = r#"^walking "([^"]*)" back with messages-tail at limit (\d+) reproduces messages with include_custom$"#
)]
fn walk_back(w: &mut SessionWorld, sid: String, limit: usize) {
    let ids_of = |v: &Value| -> Vec<String> {
        v["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("no messages in {v}"))
            .iter()
            .map(|m| m["entry_id"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    let mut walked: Vec<String> = Vec::new();
    let mut before: Option<String> = None;
    for _ in 0..1000 {
        let mut payload = json!({ "session_id": sid, "limit": limit });
        if let Some(b) = &before {
            payload["before_entry_id"] = json!(b);
        }
        let page = w.call_ok("session::messages-tail", payload);
        let ids = ids_of(&page);
        let has_more = page["has_more"].as_bool().expect("has_more is a bool");
        assert!(!(has_more && ids.is_empty()), "empty page while has_more: {page}");
        match page.get("oldest_entry_id") {
            Some(Value::String(oldest)) => assert_eq!(Some(oldest), ids.first()),
            None => assert!(ids.is_empty(), "oldest_entry_id missing on a non-empty page"),
            Some(other) => panic!("oldest_entry_id is {other}"),
        }
        walked.splice(0..0, ids);
        if !has_more {
            break;
        }
        before = page["oldest_entry_id"].as_str().map(String::from);
    }
    let full = w.call_ok(
        "session::messages",
        json!({ "session_id": sid, "include_custom": true, "limit": w.limits.max_list_limit }),
    );
    assert_eq!(walked, ids_of(&full));
}

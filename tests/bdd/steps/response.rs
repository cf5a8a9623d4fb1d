//! `Then` steps about the last call's outcome: success, error code, whole response, fields.

use cucumber::gherkin::Step;
use cucumber::then;
use serde_json::Value;

use crate::json;
use crate::world::SessionWorld;

#[then("the call succeeds")]
fn succeeds(w: &mut SessionWorld) {
    w.response();
}

#[then(regex = r#"^the call fails with "([^"]+)"$"#)]
fn fails_with(w: &mut SessionWorld, code: String) {
    match &w.last {
        Some(Err(error)) => {
            assert_eq!(error.code.as_str(), code, "wrong code in: {error}");
            assert!(error.to_string().starts_with(&format!("{code}: ")), "message: {error}");
        }
        other => panic!("expected {code}, got {other:?}"),
    }
}

#[then(regex = r#"^the error message contains "([^"]+)"$"#)]
fn error_contains(w: &mut SessionWorld, text: String) {
    match &w.last {
        Some(Err(error)) => assert!(error.to_string().contains(&text), "message: {error}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn assert_exact(expected: &Value, actual: &Value) {
    let mut diffs = Vec::new();
    json::exact_diff(expected, actual, "", &mut diffs);
    assert!(diffs.is_empty(), "response differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

fn assert_subset(expected: &Value, actual: &Value) {
    let mut diffs = Vec::new();
    json::subset_diff(expected, actual, "", &mut diffs);
    assert!(diffs.is_empty(), "response differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

#[then(regex = r#"^the response is (\{.*\}|null|\[.*\])$"#)]
fn response_is_inline(w: &mut SessionWorld, expected: String) {
    assert_exact(&json::parse(&expected), w.response());
}

#[then("the response is:")]
fn response_is_doc(w: &mut SessionWorld, step: &Step) {
    assert_exact(&json::parse(step.docstring.as_deref().expect("docstring")), w.response());
}

#[then("the response contains:")]
fn response_contains_doc(w: &mut SessionWorld, step: &Step) {
    assert_subset(&json::parse(step.docstring.as_deref().expect("docstring")), w.response());
}

#[then(regex = r#"^the response contains (\{.*\})$"#)]
fn response_contains_inline(w: &mut SessionWorld, expected: String) {
    assert_subset(&json::parse(&expected), w.response());
}

/// `... is <json>`, or `... is absent` for an omitted key (one step: the two patterns overlap).
#[then(regex = r#"^the response field "([^"]*)" is (.+)$"#)]
fn field_is(w: &mut SessionWorld, path: String, expected: String) {
    if expected == "absent" {
        let present = json::at(w.response(), &path);
        assert!(present.is_none(), "field {path} is present: {}", w.response());
        return;
    }
    let actual = json::at(w.response(), &path)
        .unwrap_or_else(|| panic!("field {path} is absent in {}", w.response()));
    assert_exact(&json::parse(&expected), actual);
}

#[then(regex = r#"^the response field "([^"]*)" has (\d+) items?$"#)]
fn field_len(w: &mut SessionWorld, path: String, n: usize) {
    let value = json::at(w.response(), &path).unwrap_or_else(|| panic!("{path} absent"));
    let len = value.as_array().unwrap_or_else(|| panic!("{path} is not an array")).len();
    assert_eq!(len, n, "{path} = {value}");
}

/// `Then the response ids at "messages" are "e_001, e_002"`: the `entry_id` (else
/// `attachment_id`, else `session_id`) of each item of an array, in order.
#[then(regex = r#"^the response ids at "([^"]*)" are "([^"]*)"$"#)]
fn ids_at(w: &mut SessionWorld, path: String, ids: String) {
    let items = json::at(w.response(), &path)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{path} is not an array in {}", w.response()));
    let actual: Vec<String> = items
        .iter()
        .map(|item| {
            item.get("entry_id")
                .or_else(|| item.get("attachment_id"))
                .or_else(|| item.get("session_id"))
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| item.as_str().unwrap_or("?").to_string())
        })
        .collect();
    let expected: Vec<String> =
        ids.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    assert_eq!(actual, expected);
}
